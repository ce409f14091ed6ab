"""Judges row_similarity on the probe's fresh tables: the cosine of every row with the query is
worked out here, in float64, and the first call that differs is shown with its numbers; a plain
dot product, a division by one length only, and a distance in place of the angle are named."""

import torch

ATOL = 1e-4


def _number(x: float) -> str:
    text = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(x) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row) for row in t) + "]"


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=1e-4))


def _judge(call) -> str:
    table, query = (t.double() for t in call.args)
    where = (
        f"row_similarity(table = {_show(table)}, query_row = {_show(query)})"
        if table.numel() <= 8
        else f"row_similarity on a table of shape {tuple(table.shape)}"
    )
    if call.error:
        if "is not available here" in call.error:
            return (
                f"{where} stopped: {call.error.removeprefix('RuntimeError: ')}. Divide by the lengths yourself: "
                "norm() gives the length of a row, and norm(dim=1) one length per row of a table."
            )
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the starter's function under its name, at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    n = table.shape[0]
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (n,) or not got.is_floating_point():
        kind = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"a {type(got).__name__}"
        return f"{where} returned {kind}; it should return one number per row of the table: a float tensor of shape ({n},)."
    lengths, q_length = table.norm(dim=1), query.norm()
    dot = table @ query
    want = dot / (lengths * q_length)
    if _close(got, want):
        return ""
    shown = f"{where} gave {_show(got)}; the cosines are {_show(want)}."
    distance = (table - query).norm(dim=1)
    mistakes = [
        (dot, "That is the plain dot product: it grows with the rows' lengths. Divide by both lengths."),
        (dot / lengths, "Each row's length is divided out, but not the query's: divide by both lengths."),
        (dot / q_length, "The query's length is divided out, but not each row's: divide by both lengths."),
        (
            -distance,
            "That is the distance between the rows, negated: it still depends on the lengths. Measure the angle: "
            "the dot product divided by both lengths.",
        ),
        (
            distance,
            "That is the distance between the rows; the exercise asks for the cosine of the angle between them.",
        ),
        (distance**2, "That is the squared distance between the rows; the exercise asks for the cosine of the angle."),
        (1 - want, "That is one minus the cosine, a distance: the most alike rows should get the largest numbers."),
    ]
    for value, said in mistakes:
        if _close(got, value):
            return f"{shown} {said}"
    return shown


def check(ns, probed=None):
    if not probed:
        return False, "row_similarity was not called on fresh tables: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    nearest, query = ns.get("nearest"), ns.get("query")
    extra = (
        f" On the program's table, '{nearest}' is nearest to '{query}' by angle." if isinstance(nearest, str) else ""
    )
    return True, (
        f"row_similarity gives the cosine on {len(probed)} tables it had never seen, whatever the rows' lengths.{extra} "
        "The plain dot product picked a long row that points elsewhere."
    )

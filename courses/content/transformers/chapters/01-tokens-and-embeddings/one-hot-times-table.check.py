"""Judges one_hot_rows on the probe's fresh ids: the right rows follow from each call's own ids, and
the first call that differs is shown with the ids and the rows, with the usual mistakes named."""

import torch


def _show(t) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(str(int(x)) if float(x).is_integer() else f"{float(x):.3g}" for x in t) + "]"
    return "[" + ", ".join(_show(row) for row in t) + "]"


def _judge(call) -> str:
    ids, vocab_size = call.args
    n = len(ids)
    where = (
        f"one_hot_rows(ids = {ids.tolist()}, vocab_size = {vocab_size})"
        if n <= 12
        else (f"one_hot_rows on {n} ids with vocab_size = {vocab_size}")
    )
    if call.error:
        if "is not available here" in call.error:
            return (
                f"{where} stopped: {call.error.removeprefix('RuntimeError: ')}. Set the 1s yourself: one entry per "
                "row, in the column that row's id names."
            )
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the starter's function under its name, at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (n, vocab_size):
        kind = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"a {type(got).__name__}"
        return f"{where} returned {kind}; it should return one row per id and one column per word: ({n}, {vocab_size})."
    if not got.is_floating_point():
        return (
            f"{where} returned a tensor of {str(got.dtype).removeprefix('torch.')}; the rows are multiplied by a float "
            "table, so they should be floats (zeros and ones) too."
        )
    want = torch.zeros(n, vocab_size)
    want[torch.arange(n), ids] = 1.0
    if torch.equal(got.float(), want):
        return ""
    shown = f"{where} gave {_show(got)}; the right rows are {_show(want)}." if n * vocab_size <= 60 else where + "."
    if bool((got == 0).all()):
        return f"{shown} Every row is still all zeros: each row needs one 1."
    every = torch.zeros(n, vocab_size)
    every[:, ids] = 1.0
    if torch.equal(got.float(), every):
        return (
            f"{shown} Every row has a 1 in the column of every id: indexing with the ids alone picks whole columns. "
            "Give the row numbers too, one row per id."
        )
    if not bool(((got == 0) | (got == 1)).all()):
        return f"{shown} A one-hot row holds only zeros and ones."
    sums = got.float().sum(dim=1)
    if not bool((sums == 1).all()):
        row = int((sums != 1).nonzero()[0])
        return f"{shown} Row {row} has {int(sums[row])} ones; each row gets exactly one."
    row = int((got.float().argmax(dim=1) != ids).nonzero()[0])
    return (
        f"{shown} Row {row} has its 1 in column {int(got[row].argmax())}; it belongs in column {int(ids[row])}, the id."
    )


def check(ns, probed=None):
    if not probed:
        return False, "one_hot_rows was not called on fresh ids: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    return True, (
        f"one_hot_rows is right on {len(probed)} lists of ids it had never seen. Each one-hot row picks one row of the "
        "table, exactly as F.embedding does: a lookup is a multiplication by a one-hot matrix, done without storing "
        "the zeros."
    )

"""Judges turn_pairs on the probe's fresh rows and angles: the turned rows are worked out here, in
float64, from each call's own arguments, and the first call that differs is shown; a second
coordinate left unchanged or turned the wrong way, and a result right for quarter turns only, are
named."""

import torch

ATOL = 1e-4


def _turn(x, angles, second="right"):
    x, angles = x.double(), angles.double()
    cos, sin = torch.cos(angles), torch.sin(angles)
    a, b = x[:, 0::2], x[:, 1::2]
    out = torch.empty_like(x)
    out[:, 0::2] = a * cos - b * sin
    out[:, 1::2] = {"right": a * sin + b * cos, "unchanged": b, "backwards": b * cos - a * sin, "quarter": a}[second]
    return out


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(x) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row) for row in t) + "]"


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=0))


MISTAKES = [
    ("unchanged", "The second coordinate of each pair is unchanged: a turned point moves in both coordinates."),
    ("backwards", "The second coordinate turns the other way from the first: check the signs of the sine terms."),
    (
        "quarter",
        "The second coordinate is the pair's first one: right for a quarter turn only. Both coordinates of a pair enter "
        "it, one with the sine and one with the cosine.",
    ),
]


def _judge(call) -> str:
    x, angles = call.args
    where = (
        f"turn_pairs(x = {_show(x)}, angles = {_show(angles)})"
        if x.numel() <= 8
        else (f"turn_pairs on x of shape {tuple(x.shape)}")
    )
    if call.error:
        if "is not available here" in call.error:
            return (
                f"{where} stopped: {call.error.removeprefix('RuntimeError: ')}. Write the second coordinate with the "
                "same four ingredients as the first: first, second, sin and cos."
            )
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the starter's function under its name, at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or not got.is_floating_point():
        kind = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"a {type(got).__name__}"
        return f"{where} returned {kind}; it should return the turned rows, a float tensor of shape {tuple(x.shape)}."
    want = _turn(x, angles)
    if _close(got, want):
        return ""
    if not _close(got[:, 0::2], want[:, 0::2]):
        return f"{where}: the even columns are no longer right. Keep the line that turns the first coordinate of each pair."
    if x.numel() <= 8:
        shown = f"{where} gave {_show(got)}; the turned rows are {_show(want)}."
    else:
        row = int((~torch.isclose(got.double(), want, atol=ATOL, rtol=0)).any(dim=1).nonzero()[0])
        shown = f"{where} differs in row {row}: {_show(got[row])} where the turned row is {_show(want[row])}."
    for second, said in MISTAKES:
        if _close(got, _turn(x, angles, second)):
            return f"{shown} {said}"
    return f"{shown} The odd columns do not match a turn: both coordinates of a pair enter the new second coordinate."


def check(ns, probed=None):
    if not probed:
        return False, "turn_pairs was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    return True, (
        f"turn_pairs is right on {len(probed)} inputs it had never seen and matches the complex product. Each pair "
        "keeps its length and turns by its angle, so a query and a key turned this way meet at an angle that depends "
        "only on their distance."
    )

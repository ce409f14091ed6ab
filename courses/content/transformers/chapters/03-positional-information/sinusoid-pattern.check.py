"""Judges sinusoid_table on the probe's fresh sizes: the right table is worked out here, in float64,
from each call's own sizes, and the first call that differs is shown with the numbers that differ;
the odd columns left as sines, sine and cosine swapped, a wrong exponent and rows that all stand
for position 0 are named."""

import torch

ATOL = 1e-4


def _table(n, d, layout="right", exponent="right"):
    i = torch.arange(d // 2, dtype=torch.float64)
    power = {"right": -2 * i / d, "i": -i / d, "positive": 2 * i / d}[exponent]
    angles = torch.arange(n, dtype=torch.float64)[:, None] * 10000.0**power
    if layout == "zero":
        angles = torch.zeros_like(angles)
    sin, cos = torch.sin(angles), torch.cos(angles)
    even, odd = {"right": (sin, cos), "zero": (sin, cos), "both-sin": (sin, sin), "swapped": (cos, sin)}[layout]
    out = torch.empty(n, d, dtype=torch.float64)
    out[:, 0::2], out[:, 1::2] = even, odd
    return out


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=0))


MISTAKES = [
    (
        dict(layout="both-sin"),
        "The odd columns repeat the sine, so each pair carries its angle twice and position 0 is a row of zeros. The "
        "second column of a pair holds the other coordinate of the same point on the circle.",
    ),
    (
        dict(layout="swapped"),
        "Sine and cosine are swapped: the even columns start at 0 at position 0, the odd ones at 1.",
    ),
    (dict(exponent="i"), "The frequencies are off: the exponent steps by 2 / d_model from one pair to the next."),
    (dict(exponent="positive"), "The frequencies grow from pair to pair; they should fall, from 1 towards 1/10000."),
    (dict(layout="zero"), "Every row is position 0's: row p's angle is p times the frequency."),
]


def _judge(call) -> str:
    n, d = call.args
    where = f"sinusoid_table({n}, {d})"
    if call.error:
        if "is not available here" in call.error:
            return (
                f"{where} stopped: {call.error.removeprefix('RuntimeError: ')}. Keep the starter's function and fix its "
                "line for the odd columns."
            )
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the starter's function under its name, at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (n, d):
        kind = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"a {type(got).__name__}"
        return f"{where} returned {kind}; it should return the table, a tensor of shape ({n}, {d})."
    if not got.is_floating_point() or not bool(torch.isfinite(got).all()):
        return f"{where} returned {str(got.dtype).removeprefix('torch.')} or NaN: every entry is a sine or a cosine."
    want = _table(n, d)
    if _close(got, want):
        return ""
    if n * d <= 16:
        shown = f"{where} gave {_show(got)}; the right table is {_show(want)}."
    else:
        row = int((~torch.isclose(got.double(), want, atol=ATOL, rtol=0)).any(dim=1).nonzero()[0])
        shown = f"{where} differs at position {row}: {_show(got[row, :6])} where the right row starts {_show(want[row, :6])}."
    for kwargs, said in MISTAKES:
        if _close(got, _table(n, d, **kwargs)):
            return f"{shown} {said}"
    return shown


def check(ns, probed=None):
    if not probed:
        return False, "sinusoid_table was not called on fresh sizes: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    return True, (
        f"sinusoid_table is right on {len(probed)} sizes it had never seen. Every position now has its own row: at "
        "position 0 the odd columns read 1, and each pair turns at its own speed, fast on the left of the heat map "
        "and slow on the right."
    )

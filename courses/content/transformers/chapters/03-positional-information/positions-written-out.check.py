"""Judges position_frequencies, sinusoidal_positions and rotate on the probe's fresh sizes, bases and
positions: the right answers are worked out here, in float64, from each call's own arguments, and
the first call that differs is shown with its input, what came back and what should have; the
usual mistakes (sine and cosine swapped, the wrong exponent, positions left at zero, a turn the
wrong way, pairs taken as halves) are named."""

import torch

# A position in the thousands turns its first pair by thousands of radians, where float32 keeps
# about 4 decimals: the tolerance grows with the largest position of the call.
ATOL = 1e-4
PER_POSITION = 4e-7


def _freqs(d, base, exponent="right"):
    i = torch.arange(d // 2, dtype=torch.float64)
    power = {"right": -2 * i / d, "i": -i / d, "positive": 2 * i / d, "half": -2 * i / (d // 2)}[exponent]
    return torch.tensor(float(base), dtype=torch.float64) ** power


def _interleave(even, odd):
    out = torch.empty(*even.shape[:-1], 2 * even.shape[-1], dtype=torch.float64)
    out[..., 0::2], out[..., 1::2] = even, odd
    return out


def _table(n, d, base, exponent="right", layout="right", first=0):
    angles = torch.arange(first, first + n, dtype=torch.float64)[:, None] * _freqs(d, base, exponent)
    sin, cos = torch.sin(angles), torch.cos(angles)
    if layout == "halves":
        return torch.cat([sin, cos], dim=-1)
    even, odd = {"right": (sin, cos), "swapped": (cos, sin), "both-sin": (sin, sin), "both-cos": (cos, cos)}[layout]
    return _interleave(even, odd)


def _turn(x, positions, base, exponent="right", sign=1.0, layout="pairs", second="turned"):
    x = x.double()
    n, d = x.shape[-2], x.shape[-1]
    angles = sign * positions.double()[:, None] * _freqs(d, base, exponent)
    cos, sin = torch.cos(angles), torch.sin(angles)
    if layout == "halves":
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return _interleave(a * cos - b * sin, b if second == "unchanged" else a * sin + b * cos)


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 0:
        return _number(float(t), digits)
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _both(got, want) -> tuple[str, str]:
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _base(call) -> float:
    return float(call.kwargs.get("base", call.args[2] if len(call.args) > 2 else 10000.0))


def _where(call) -> str:
    base = call.kwargs.get("base")
    tail = "" if base is None else f", base={_number(base)}"
    if call.function != "rotate":
        return f"{call.function}({', '.join(str(a) for a in call.args)}{tail})"
    x = call.args[0]
    positions = call.args[1] if len(call.args) > 1 else None
    shown_x = f"x = {_show(x)}" if x.numel() <= 8 else f"x of shape {tuple(x.shape)}"
    shown_p = "" if positions is None else f", positions = {positions.tolist()}"
    return f"rotate({shown_x}{shown_p}{tail})"


def _close(got, want, tolerance) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=tolerance, rtol=0))


def _error(where: str, error: str) -> str:
    if "is not available here" in error:
        if "groundup." in error.split(" is not")[0]:
            return (
                f"{where} stopped: {error.removeprefix('RuntimeError: ')}. The course module's copy is not there "
                "while you do this exercise: write the function in your code."
            )
        return (
            f"{where} stopped: {error.removeprefix('RuntimeError: ')}. Turn each pair with its cosine and sine: "
            "(a, b) becomes (a cos - b sin, a sin + b cos)."
        )
    if "defines no function" in error:
        return (
            f"{where}: {error}. Define it with def at the top level of your code, under that name: your function is "
            "called again in a fresh run that keeps only your imports, functions, classes and plain constants."
        )
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your function is called again in a fresh run that keeps only your imports, "
            "functions, classes and plain constants; compute anything else inside the function."
        )
    return f"{where} raised an error: {error}"


def _tensor(where: str, got, shape) -> str:
    """What is wrong with the kind of value that came back (empty: nothing)."""
    if not isinstance(got, torch.Tensor):
        kind = "nothing yet: write its body" if got is None else f"a {type(got).__name__}"
        return f"{where} returned {kind}; it should return a tensor of shape {shape}."
    if not got.is_floating_point():
        return f"{where} returned a tensor of {str(got.dtype).removeprefix('torch.')}; it should hold real numbers."
    if tuple(got.shape) != shape:
        return f"{where} returned a tensor of shape {tuple(got.shape)}; it should be {shape}."
    if not bool(torch.isfinite(got).all()):
        return f"{where} returned NaN or infinity; every entry is a frequency, a sine or a cosine of a finite angle."
    return ""


EXPONENTS = [
    (
        "i",
        "The exponent uses i where it needs 2i: f_i = base ** (-2i / d_model), so the pairs' exponents step by 2 / d_model.",
    ),
    (
        "positive",
        "The exponent has lost its minus sign: the frequencies should fall from 1 towards 1 / base, not grow.",
    ),
    ("half", "The exponent divides by d_model / 2; it divides by d_model."),
]


def _judge_frequencies(call) -> str:
    d, base = call.args[0], _base(call)
    where = _where(call)
    want = _freqs(d, base)
    problem = _tensor(where, call.value, (d // 2,))
    if problem:
        return problem
    got = call.value
    if _close(got, want, 1e-6):
        return ""
    got_s, want_s = _both(got, want) if d <= 10 else _both(got[:5], want[:5])
    shown = f"{where} gave {got_s}; the frequencies are {want_s}" + ("." if d <= 10 else " (the first five).")
    for exponent, said in EXPONENTS:
        if _close(got, _freqs(d, base, exponent), 1e-6):
            return f"{shown} {said}"
    return shown


def _judge_table(call) -> str:
    n, d = call.args[:2]
    base, where = _base(call), _where(call)
    want = _table(n, d, base)
    problem = _tensor(where, call.value, (n, d))
    if problem:
        return problem
    got = call.value
    tolerance = ATOL + PER_POSITION * n
    if _close(got, want, tolerance):
        return ""
    if n * d <= 12:
        got_s, want_s = _both(got, want)
        shown = f"{where} gave {got_s}; the right table is {want_s}."
    else:
        row = int((~torch.isclose(got.double(), want, atol=tolerance, rtol=0)).any(dim=1).nonzero()[0])
        got_s, want_s = _both(got[row], want[row])
        shown = f"{where} differs at position {row}: {got_s} where the right row is {want_s}."
    mistakes = [
        (
            dict(layout="swapped"),
            "Sine and cosine are swapped: column 2i holds the sine, so position 0 reads (0, 1, 0, 1, ...).",
        ),
        (dict(layout="both-sin"), "The odd columns repeat the sine: column 2i + 1 holds the cosine of the same angle."),
        (dict(layout="both-cos"), "The even columns hold the cosine: column 2i holds the sine of the angle."),
        (
            dict(layout="halves"),
            "The sines fill the first half and the cosines the second: they alternate, pair by pair.",
        ),
        (dict(first=1), "The positions start at 1; the first row is position 0."),
    ] + [(dict(exponent=exponent), said) for exponent, said in EXPONENTS]
    for kwargs, said in mistakes:
        if _close(got, _table(n, d, base, **kwargs), tolerance):
            return f"{shown} {said}"
    if _close(got, want[:1].expand(n, d), tolerance):
        return f"{shown} Every row is position 0's: the angle of row p is p times the frequency."
    return shown


def _judge_rotate(call) -> str:
    x = call.args[0]
    n = x.shape[-2]
    positions = call.args[1] if len(call.args) > 1 else None
    base, where = _base(call), _where(call)
    if positions is not None and tuple(positions.shape) != (n,):
        if call.error:
            if call.error.startswith("ValueError"):
                return ""
            return f"{where} raised {call.error.split(':')[0]}; a list of positions of the wrong length should raise a ValueError."
        return (
            f"{where} returned a tensor: one position for {n} rows should raise a ValueError. Applied to every row, "
            "it would give them all the same turn, and a model could not tell them apart."
        )
    if call.error:
        return _error(where, call.error)
    used = torch.arange(n) if positions is None else positions
    want = _turn(x, used, base)
    problem = _tensor(where, call.value, tuple(x.shape))
    if problem:
        return problem
    got = call.value
    if got.dtype != x.dtype:
        return f"{where} returned {str(got.dtype).removeprefix('torch.')}; it should keep x's dtype, {str(x.dtype).removeprefix('torch.')}."
    tolerance = ATOL + PER_POSITION * float(used.abs().max()) * float(x.abs().max())
    if _close(got, want, tolerance):
        return ""
    if x.numel() <= 8:
        got_s, want_s = _both(got, want)
        shown = f"{where} gave {got_s}; the turned rows are {want_s}."
    else:
        flat_got, flat_want = got.double().reshape(-1, x.shape[-1]), want.reshape(-1, x.shape[-1])
        row = int((~torch.isclose(flat_got, flat_want, atol=tolerance, rtol=0)).any(dim=1).nonzero()[0])
        got_s, want_s = _both(flat_got[row], flat_want[row])
        shown = f"{where} differs in row {row % n} (position {int(used[row % n])}): {got_s} where the right row is {want_s}."
    mistakes = [
        (
            dict(sign=-1.0),
            "Each pair turns the wrong way: the sine term takes a minus in the first new coordinate and a plus in the second.",
        ),
        (
            dict(second="unchanged"),
            "The second coordinate of each pair is unchanged: a turned point moves in both coordinates.",
        ),
        (
            dict(layout="halves"),
            "The pairs are taken as the first and second halves of the row; a pair is two neighbouring columns, 2i and 2i + 1.",
        ),
    ] + [(dict(exponent=exponent), said) for exponent, said in EXPONENTS]
    for kwargs, said in mistakes:
        if _close(got, _turn(x, used, base, **kwargs), tolerance):
            return f"{shown} {said}"
    if _close(got, x.double(), tolerance):
        return f"{shown} Nothing was turned: every position acted like position 0."
    if positions is not None and _close(got, _turn(x, torch.arange(n), base), tolerance):
        return f"{shown} The positions given were ignored: 0, 1, 2, ... is only what None stands for."
    return shown


JUDGES = {"position_frequencies": _judge_frequencies, "sinusoidal_positions": _judge_table, "rotate": _judge_rotate}


def _judge(call) -> str:
    if call.error and call.function != "rotate":
        return _error(_where(call), call.error)
    return JUDGES[call.function](call)


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    return True, (
        f"Your three functions are right on {len(probed)} calls they had never seen: frequencies for several widths "
        "and bases, sinusoid tables whose rows all differ, and turns of queries with batch and head axes, at "
        "positions that start late, come in any order or run into the thousands."
    )

"""Judges layer_norm, rms_norm, LayerNorm and RMSNorm on the probe's fresh inputs: the right outputs
are worked out here, in float64, from each call's own arguments, and the first call that differs is
shown to the learner with its numbers when it is small enough to read."""

import torch

ATOL = RTOL = 1e-4
# A call this small (all its tensors together) is printed in full in a message.
PRINTABLE = 16
NAMES = {"layer_norm": ("x", "gain", "shift"), "rms_norm": ("x", "gain")}
DEFAULT_EPS = {"layer_norm": 1e-5, "rms_norm": 1e-6}


def _layer_norm(x, gain, shift, eps, *, correction=0, axis=-1, centre=True, centre_var=True, inside=True, affine=True):
    """Layer norm in float64, right by default; the keyword arguments make the mistakes the check
    recognises (Bessel's correction, another axis, no centring, eps outside the root, no gain)."""
    x, gain, shift = x.double(), gain.double(), shift.double()
    mean = x.mean(dim=axis, keepdim=True)
    deviations = x - mean if centre_var else x
    var = deviations.pow(2).sum(dim=axis, keepdim=True) / (x.shape[axis] - correction)
    spread = torch.sqrt(var + eps) if inside else torch.sqrt(var) + eps
    out = (x - mean if centre else x) / spread
    return out * gain + shift if affine else out


def _rms_norm(x, gain, eps, *, length=False, centre=False, inside=True, affine=True, axis=-1):
    """RMSNorm in float64, right by default; the keyword arguments make the mistakes the check
    recognises (the length instead of the root mean square, centring first, eps outside the root)."""
    x, gain = x.double(), gain.double()
    if centre:
        x = x - x.mean(dim=axis, keepdim=True)
    squares = x.pow(2).sum(dim=axis, keepdim=True) if length else x.pow(2).mean(dim=axis, keepdim=True)
    size = torch.sqrt(squares + eps) if inside else torch.sqrt(squares) + eps
    return x / size * gain if affine else x / size


def _eps(call):
    return call.kwargs.get("eps", DEFAULT_EPS[call.function])


def _right(call):
    if call.function == "layer_norm":
        return _layer_norm(*call.args, _eps(call))
    return _rms_norm(*call.args, _eps(call))


def _mistakes(call):
    x = call.args[0]
    d = x.shape[-1]
    if call.function == "layer_norm":
        found = [
            (
                dict(correction=1),
                f"The variance divides by d - 1 = {d - 1} (Bessel's correction, torch.var's default); layer "
                f"norm takes the plain mean of the squared deviations, dividing by d = {d}.",
            ),
            (
                dict(inside=False),
                "eps is added after the square root; it belongs under it: sqrt(variance + eps).",
            ),
            (
                dict(centre=False),
                "The mean is not subtracted from the row before dividing: layer norm centres each row first.",
            ),
            (
                dict(centre_var=False),
                "The variance is the mean of the squares of the row itself; it is the mean of the squared "
                "deviations from the row's mean.",
            ),
            (dict(affine=False), "The rows are normalised, but the gain and the shift are missing."),
            (
                dict(axis=0),
                "The statistics are taken along the first axis, across rows; each row (the last axis) is "
                "normalised on its own.",
            ),
        ]
        return found
    found = [
        (
            dict(length=True),
            f"That divides by the row's length, the root of the sum of the squares: sqrt({d}) times more than "
            "the root of their mean.",
        ),
        (
            dict(centre=True),
            "The row is centred first; RMSNorm skips the mean: it only divides by the root mean square.",
        ),
        (dict(inside=False), "eps is added after the square root; it belongs under it: sqrt(mean square + eps)."),
        (dict(affine=False), "The rows are divided by their root mean square, but the gain is missing."),
        (
            dict(axis=0),
            "The mean square is taken along the first axis, across rows; each row (the last axis) is "
            "divided by its own.",
        ),
    ]
    return found


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 0:
        return _number(t.item(), digits)
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _input(call) -> str:
    names = NAMES[call.function]
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        shown = ", ".join(f"{name} = {_show(t)}" for name, t in zip(names, call.args, strict=True))
    else:
        shown = ", ".join(f"{name} {tuple(t.shape)}" for name, t in zip(names, call.args, strict=True))
    if "eps" in call.kwargs:
        shown += f", eps={call.kwargs['eps']:g}"
    return shown


def _both(got, want) -> tuple[str, str]:
    """The learner's tensor and the right one, with as many decimals as it takes to tell them apart."""
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want, tolerance=ATOL) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=tolerance, rtol=tolerance))


def _error(call, where):
    error = call.error
    if "is not available here" in error:
        return (
            f"{where} stopped: {error}. Work the statistics out yourself: a mean, a sum of squares, torch.sqrt "
            "and a division."
        )
    if "defines no function" in error:
        return (
            f"{where}: {error}. Define it with def (or class) at the top level of your code, under that name: "
            "your code is run again in a fresh process that keeps only your imports, functions, classes and "
            "plain constants."
        )
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your code is run again in a fresh process that keeps only your imports, "
            "functions, classes and plain constants (such as D = 8); compute anything else inside the function."
        )
    if error.startswith("TypeError") and "eps" in error:
        return f"{where} raised {error}. Keep the signature as given, eps included, with its default."
    return f"{where} raised an error: {error}"


def _judge_function(call):
    """(ok, message) for one call of layer_norm or rms_norm."""
    where = f"{call.function} on {_input(call)}"
    if call.error:
        return False, _error(call, where)
    x = call.args[0]
    want = _right(call)
    got = _tensor(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}. It should return a tensor of the shape of x, {tuple(x.shape)}."
    if tuple(got.shape) != tuple(x.shape):
        return False, (
            f"{where} returned shape {tuple(got.shape)}; it should keep the shape of x, {tuple(x.shape)}: keep the "
            "last axis when you take a row's statistics (keepdim=True), so they line up with its numbers."
        )
    if not got.is_floating_point():
        return False, f"{where} returned a tensor of {str(got.dtype).removeprefix('torch.')}; it should hold floats."
    if torch.isnan(got).any() or torch.isinf(got).any():
        return False, f"{where} gave NaN or infinity: keep eps under the square root, so it never divides by zero."
    if _close(got, want):
        return True, ""
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        mine, right = _both(got, want)
        shown = f"{where} gave {mine}; the right output is {right}."
    else:
        flat_got, flat_want = got.double().reshape(-1, x.shape[-1]), want.reshape(-1, x.shape[-1])
        row = int((~torch.isclose(flat_got, flat_want, atol=ATOL, rtol=RTOL)).any(dim=1).nonzero()[0])
        mine, right = _both(flat_got[row], flat_want[row])
        shown = f"{where} differs in row {row} (counting every row of every leading axis): {mine} where the right output has {right}."
    maker = _layer_norm if call.function == "layer_norm" else _rms_norm
    for kwargs, said in _mistakes(call):
        # A looser match: a mistake computed in float32 drifts further on the flattest rows.
        if _close(got, maker(*call.args, _eps(call), **kwargs), 1e-3):
            return False, f"{shown} {said}"
    if "eps" in call.kwargs and _close(got, maker(*call.args, DEFAULT_EPS[call.function]), 1e-3):
        return False, f"{shown} The eps given, {call.kwargs['eps']:g}, is not used: the default is in its place."
    return False, shown


def _judge_module(call):
    """(ok, message) for one LayerNorm(d) or RMSNorm(d) built fresh."""
    (d,) = call.args
    where = f"{call.function}({d})"
    if call.error:
        return False, _error(call, where)
    module = call.value
    state = module.state_dict() if hasattr(module, "state_dict") else None
    if state is None:
        kind = "nothing" if module is None else f"a {type(module).__name__}"
        return False, f"{where} made {kind}: keep it an nn.Module class, as the starter has it."
    wanted = {"weight": torch.ones(d)} | ({"bias": torch.zeros(d)} if call.function == "LayerNorm" else {})
    if set(state) != set(wanted):
        names = ", ".join(sorted(state)) or "none"
        return False, (
            f"{where} has the parameters {names}; it should have {' and '.join(wanted)}, each an nn.Parameter of "
            f"shape ({d},), under those names, so that weights copy across from PyTorch's own norms."
        )
    for name, start in wanted.items():
        t = state[name]
        if tuple(t.shape) != (d,):
            return False, f"{where}.{name} has shape {tuple(t.shape)}; it should be ({d},): one number per column."
        if not torch.equal(t.double(), start.double()):
            begin = "ones" if name == "weight" else "zeros"
            return False, (
                f"{where}.{name} starts at {_show(t.flatten()[:6])}; it should start at {begin}, so a fresh norm "
                "leaves a normalised row as it is."
            )
    return True, ""


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    counts, failures = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            judge = _judge_module if call.function in ("LayerNorm", "RMSNorm") else _judge_function
            ok, message = judge(call)
            if not ok:
                failures[call.function] = message
    if failures:
        message = next(iter(failures.values()))
        right = [name for name in counts if name not in failures and name in NAMES]
        if right and next(iter(failures)) in NAMES:
            return False, f"{right[0]} is right on all {counts[right[0]]} of its inputs. {message}"
        return False, message
    return True, (
        f"layer_norm and rms_norm are right on {counts['layer_norm'] + counts['rms_norm']} inputs they had never "
        "seen, with leading axes, rows so flat that eps decides, and an eps of your caller's choosing; LayerNorm and "
        "RMSNorm start as nn.LayerNorm and nn.RMSNorm do. These are now the norms groundup's blocks use."
    )

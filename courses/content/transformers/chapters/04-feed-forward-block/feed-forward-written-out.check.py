"""Judges feed_forward and swiglu on the probe's fresh inputs: the right outputs are worked out here,
in float64, from each call's own arguments, and the first call that differs is shown to the learner
with its numbers when it is small enough to read."""

import math

import torch

ATOL = RTOL = 1e-5
# A call this small (all its tensors together) is printed in full in a message.
PRINTABLE = 24
NAMES = {"feed_forward": ("x", "w1", "b1", "w2", "b2"), "swiglu": ("x", "w_gate", "w_up", "w_down")}


def _gelu(z):
    return z * (1 + torch.erf(z / math.sqrt(2))) / 2


def _gelu_tanh(z):
    return 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def _silu(z):
    return z * torch.sigmoid(z)


def _relu(z):
    return z.clamp(min=0)


def _block(x, w1, b1, w2, b2, *, act=_gelu, bias1=True, bias2=True, bias1_after=False):
    """The feed-forward block in float64, right by default; the keyword arguments make the mistakes
    the check recognises."""
    x, w1, b1, w2, b2 = (t.double() for t in (x, w1, b1, w2, b2))
    h = x @ w1
    if bias1 and not bias1_after:
        h = h + b1
    h = act(h)
    if bias1_after:
        h = h + b1
    out = h @ w2
    return out + b2 if bias2 else out


def _gated(x, w_gate, w_up, w_down, *, act=_silu, swap=False, outside=False):
    """The gated block in float64, right by default; the keyword arguments make the mistakes the
    check recognises."""
    x, w_gate, w_up, w_down = (t.double() for t in (x, w_gate, w_up, w_down))
    gate, up = x @ w_gate, x @ w_up
    if swap:
        gate, up = up, gate
    hidden = act(gate * up) if outside else act(gate) * up
    return hidden @ w_down


def _right(call):
    return (_block if call.function == "feed_forward" else _gated)(*call.args)


def _mistakes(call):
    if call.function == "feed_forward":
        return [
            (
                dict(act=_relu),
                "That is ReLU in the middle. This block uses GELU, z times Phi(z), smooth and slightly "
                "negative left of zero.",
            ),
            (
                dict(act=_gelu_tanh),
                "Close: that is the tanh approximation of GELU. The block uses the exact one, "
                "built on erf: Phi(z) = (1 + erf(z / sqrt(2))) / 2.",
            ),
            (dict(act=_silu), "That is SiLU in the middle, z times sigmoid(z). This block uses GELU, z times Phi(z)."),
            (
                dict(act=lambda z: z),
                "The two layers run straight into each other, which makes them one linear map: "
                "apply GELU to the hidden numbers in between.",
            ),
            (
                dict(bias1=False, bias2=False),
                "Both biases are missing: add b1 to the widened numbers and b2 to the output.",
            ),
            (dict(bias1=False), "b1 is missing: add it to the widened numbers, before GELU."),
            (dict(bias2=False), "b2 is missing: add it to the output, after the second product."),
            (dict(bias1_after=True), "b1 is added after GELU; it belongs to the widening, before the activation."),
        ]
    return [
        (dict(swap=True), "Gate and up are swapped: SiLU goes on x @ w_gate, and x @ w_up is what it scales."),
        (dict(act=torch.sigmoid), "The gate uses sigmoid(z); SwiGLU's gate is SiLU, z times sigmoid(z)."),
        (dict(act=_gelu), "The gate uses GELU; SwiGLU's gate is SiLU, z times sigmoid(z)."),
        (dict(act=_relu), "The gate uses ReLU; SwiGLU's gate is SiLU, z times sigmoid(z)."),
        (dict(act=lambda z: z), "There is no activation: SiLU goes on the gate numbers before the product."),
        (
            dict(outside=True),
            "SiLU is applied after the product; it goes on the gate numbers alone, before "
            "multiplying by the up numbers.",
        ),
    ]


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _input(call) -> str:
    names = NAMES[call.function]
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        return ", ".join(f"{name} = {_show(t)}" for name, t in zip(names, call.args, strict=True))
    return ", ".join(f"{name} {tuple(t.shape)}" for name, t in zip(names, call.args, strict=True))


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


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))


def _judge(call):
    """(ok, message) for one call."""
    where = f"{call.function} on {_input(call)}"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, (
                f"{where} stopped: {error}. Build the activation from its formula with torch.erf, torch.exp or "
                "torch.sigmoid."
            )
        if "asks you to write" in error or ("cannot import name" in error and "groundup" in error):
            return False, (
                f"{where}: {error}. This exercise asks you to write feed_forward and swiglu yourself, so groundup's "
                "own are not there when your functions are judged."
            )
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Define it with def at the top level of your code, under that name: your "
                "functions are called again in a fresh run that keeps only your imports, functions, classes and "
                "plain constants, so a name given by an assignment (name = another_function) is not there."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. Your functions are called again in a fresh run that keeps only your "
                "imports, functions, classes and plain constants (such as D = 8); compute anything else inside "
                "the function."
            )
        if "shapes cannot be multiplied" in error or "size of tensor" in error:
            return False, (
                f"{where} raised {error}. The weights come in the formula's layout, (in, out): x @ w1 needs no "
                "transpose here."
            )
        return False, f"{where} raised an error: {error}"
    x = call.args[0]
    want = _right(call)
    got = _tensor(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}. It should return a tensor of shape {tuple(want.shape)}."
    if tuple(got.shape) != tuple(want.shape):
        return False, (
            f"{where} returned shape {tuple(got.shape)}; it should be {tuple(want.shape)}, the shape of x: its "
            f"leading axes, one row per token, as wide as x ({x.shape[-1]})."
        )
    if not got.is_floating_point():
        return False, (
            f"{where} returned a tensor of {str(got.dtype).removeprefix('torch.')}; the output should hold real "
            "floating-point numbers, such as float32."
        )
    if torch.isnan(got).any() or torch.isinf(got).any():
        return (
            False,
            f"{where} gave NaN or infinity; the right output is {_show(want) if want.numel() <= 8 else 'finite'}.",
        )
    if _close(got, want):
        return True, ""
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        mine, right = _both(got, want)
        shown = f"{where} gave {mine}; the right output is {right}."
    else:
        bad = (~torch.isclose(got.double(), want, atol=ATOL, rtol=RTOL)).any(dim=-1)
        first = tuple(int(i) for i in bad.nonzero()[0])
        *lead, row = first
        place = f"row {row}" if not lead else f"row {row} of sequence {tuple(lead) if len(lead) > 1 else lead[0]}"
        mine, right = _both(got[first], want[first])
        shown = f"{where} differs in {place}: {mine} where the right output has {right}."
    maker = _block if call.function == "feed_forward" else _gated
    for kwargs, said in _mistakes(call):
        if _close(got, maker(*call.args, **kwargs)):
            return False, f"{shown} {said}"
    return False, shown


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    counts, failures = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            ok, message = _judge(call)
            if not ok:
                failures[call.function] = message
    if failures:
        message = next(iter(failures.values()))
        right = [name for name in counts if name not in failures]
        return False, f"{right[0]} is right on all {counts[right[0]]} of its inputs. {message}" if right else message
    return True, (
        f"feed_forward and swiglu are right on {len(probed)} inputs they had never seen, from one token to eight, "
        "alone and in batches, with hidden numbers on both sides of zero, where GELU and SiLU bend. From here on "
        "groundup's FeedForward and SwiGLU run on your functions."
    )

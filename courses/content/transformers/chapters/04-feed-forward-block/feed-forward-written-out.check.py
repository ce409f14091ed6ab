"""Judges gelu, feed_forward and swiglu on the probe's fresh inputs: the right outputs are worked out
here, in float64, from each call's own arguments, and the first call that differs is shown to the
learner with its numbers when it is small enough to read. FeedForward and SwiGLU are judged by the
names and shapes of the layers they build, compared with what each call's widths ask for."""

import math

import torch

ATOL = RTOL = 1e-5
# A call this small (all its tensors together) is printed in full in a message.
PRINTABLE = 24
NAMES = {"gelu": ("z",), "feed_forward": ("x", "w1", "b1", "w2", "b2"), "swiglu": ("x", "w_gate", "w_up", "w_down")}
MODULES = ("FeedForward", "SwiGLU")


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


def _maker(call):
    if call.function == "gelu":
        return lambda z, act=_gelu: act(z.double())
    return _block if call.function == "feed_forward" else _gated


def _right(call):
    return _maker(call)(*call.args)


def _mistakes(call):
    if call.function == "gelu":
        return [
            (dict(act=_relu), "That is ReLU: GELU is z times Phi(z), smooth and slightly negative left of zero."),
            (
                dict(act=_gelu_tanh),
                "Close: that is the tanh approximation of GELU. This one is the exact GELU, built on erf: "
                "Phi(z) = (1 + erf(z / sqrt(2))) / 2.",
            ),
            (
                dict(act=lambda z: z * torch.sigmoid(1.702 * z)),
                "Close: that is the sigmoid approximation of GELU, z times sigmoid(1.702 z). This one is the "
                "exact GELU, built on erf.",
            ),
            (dict(act=_silu), "That is SiLU, z times sigmoid(z). GELU is z times Phi(z), built on erf."),
            (
                dict(act=lambda z: z * (1 + torch.erf(z)) / 2),
                "erf gets z itself; it should get z / sqrt(2), so that Phi is the standard normal's CDF.",
            ),
            (dict(act=lambda z: z * (1 + torch.erf(z / math.sqrt(2)))), "That is twice GELU: Phi(z) has a / 2."),
            (
                dict(act=lambda z: (1 + torch.erf(z / math.sqrt(2))) / 2),
                "That is Phi(z) alone; GELU multiplies it by z.",
            ),
            (dict(act=lambda z: z), "Every number comes back unchanged: GELU multiplies z by Phi(z)."),
        ]
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
                f"{where}: {error}. This exercise asks you to write gelu, feed_forward, swiglu, FeedForward and "
                "SwiGLU yourself, so groundup's "
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
    if tuple(got.shape) != tuple(want.shape) and call.function == "gelu":
        return False, (
            f"{where} returned shape {tuple(got.shape)}; it should be {tuple(want.shape)}, the shape of z: GELU "
            "works on every number on its own."
        )
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
        wrong = ~torch.isclose(got.double(), want, atol=ATOL, rtol=RTOL)
        if call.function == "gelu":
            first = tuple(int(i) for i in wrong.nonzero()[0])
            value = _number(float(x[first]), 4)
            mine, right = _both(got[first].reshape(1), want[first].reshape(1))
            shown = f"{where} differs at z = {value}: {mine[1:-1]} where GELU gives {right[1:-1]}."
        else:
            first = tuple(int(i) for i in wrong.any(dim=-1).nonzero()[0])
            *lead, row = first
            place = f"row {row}" if not lead else f"row {row} of sequence {tuple(lead) if len(lead) > 1 else lead[0]}"
            mine, right = _both(got[first], want[first])
            shown = f"{where} differs in {place}: {mine} where the right output has {right}."
    maker = _maker(call)
    for kwargs, said in _mistakes(call):
        if _close(got, maker(*call.args, **kwargs)):
            return False, f"{shown} {said}"
    return False, shown


def _layers(function, d, hidden=None):
    """{name: shape} of the parameters the module should have, in the order they are created."""
    if function == "FeedForward":
        wide = 4 * d if hidden is None else hidden
        return {
            "expand.weight": (wide, d),
            "expand.bias": (wide,),
            "contract.weight": (d, wide),
            "contract.bias": (d,),
        }
    wide = round(8 * d / 3) if hidden is None else hidden
    return {"gate.weight": (wide, d), "up.weight": (wide, d), "down.weight": (d, wide)}


def _judge_module(call):
    """(ok, message) for one module built by the probe: its layers' names, shapes and order, and
    weights that start as nn.Linear's do."""
    d, *rest = call.args
    hidden = rest[0] if rest else call.kwargs.get("hidden")
    shown = ", ".join([str(a) for a in call.args] + [f"{k}={v!r}" for k, v in call.kwargs.items()])
    where = f"{call.function}({shown})"
    if call.error:
        return False, f"{where} raised an error: {call.error}"
    block = call.value
    state = block.state_dict() if hasattr(block, "state_dict") else None
    if state is None:
        return False, f"{where} made a {type(block).__name__}: keep {call.function} an nn.Module class."
    if not state:
        return False, f"{where} has no layers yet: write its __init__."
    expected = _layers(call.function, d, hidden)
    wide = next(iter(expected.values()))[0]
    default = (
        "4 * d_model" if call.function == "FeedForward" else "8 * d_model / 3, rounded to the nearest whole number"
    )
    if call.function == "SwiGLU" and any(name.endswith(".bias") for name in state):
        return False, f"{where} has {', '.join(n for n in state if n.endswith('.bias'))}: SwiGLU's layers have no bias."
    missing = [name for name in expected if name not in state]
    extra = [name for name in state if name not in expected]
    if missing or extra:
        said = f"{where} should have {', '.join(missing)}" if missing else where
        said += f"{' and' if missing else ''} has {', '.join(extra)}, which it should not" if extra else ""
        names = "expand and contract" if call.function == "FeedForward" else "gate, up and down"
        return False, f"{said}. Its layers are {names}, the names its forward reads."
    for name, shape in expected.items():
        got = tuple(state[name].shape)
        if got == shape:
            continue
        if got == shape[::-1] and len(shape) == 2:
            return False, (
                f"{where}: {name} has shape {got}; nn.Linear stores (out, in), so it should be {shape}: "
                "nn.Linear takes its in-width first."
            )
        if hidden is None and wide in shape and len(got) == len(shape):
            return False, (
                f"{where}: {name} has shape {got}; it should be {shape}. Without a hidden width the block widens "
                f"to {default}, here {wide}."
            )
        return False, f"{where}: {name} has shape {got}; it should be {shape}."
    if list(state) != list(expected):
        return False, (
            f"{where} creates its layers in the order {', '.join(dict.fromkeys(k.split('.')[0] for k in state))}; "
            f"create them in the order {', '.join(dict.fromkeys(k.split('.')[0] for k in expected))}, so that the "
            "same seed gives the same weights as the course's."
        )
    for name, weight in state.items():
        fan_in = weight.shape[1] if weight.dim() == 2 else state[name.replace("bias", "weight")].shape[1]
        bound = 1 / math.sqrt(fan_in) + 1e-6
        if weight.numel() > 1 and (weight.abs().max() > bound or float(weight.double().std()) == 0):
            return False, f"{where}: {name} should start as nn.Linear starts it, drawn at random within 1/sqrt(in)."
    return True, ""


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    counts, failures = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            ok, message = (_judge_module if call.function in MODULES else _judge)(call)
            if not ok:
                failures[call.function] = message
    if failures:
        message = next(iter(failures.values()))
        right = [name for name in counts if name not in failures]
        return False, f"{right[0]} is right on all {counts[right[0]]} of its inputs. {message}" if right else message
    return True, (
        f"gelu, feed_forward and swiglu are right on {sum(counts[n] for n in NAMES)} inputs they had never seen, "
        "from one token to eight, alone and in batches, with hidden numbers on both sides of zero, where GELU and "
        "SiLU bend, and FeedForward and SwiGLU build the right layers at a width they had never seen. From here "
        "on the course's blocks are yours."
    )

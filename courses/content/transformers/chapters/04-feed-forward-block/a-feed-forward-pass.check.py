"""Judges feed_forward on the probe's fresh inputs (the right output worked out here, in float64,
from each call's own arguments), then what the program left: its parameter count, and its by-hand
pass against the block it built."""

import math

import torch

ATOL = RTOL = 1e-5
# A call this small (all its tensors together) is printed in full in a message.
PRINTABLE = 24
NAMES = ("x", "w1", "b1", "w2", "b2")
_STATE = ("expand.weight", "expand.bias", "contract.weight", "contract.bias")


def _gelu(z):
    return z * (1 + torch.erf(z / math.sqrt(2))) / 2


def _gelu_tanh(z):
    return 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def _block(x, w1, b1, w2, b2, act=_gelu):
    x, w1, b1, w2, b2 = (t.double() for t in (x, w1, b1, w2, b2))
    return act(x @ w1 + b1) @ w2 + b2


MISTAKES = (
    (
        lambda z: z,
        "The two layers run straight into each other, which makes them one linear map. The block applies its "
        "activation to the hidden numbers in between.",
    ),
    (lambda z: z.clamp(min=0), "Close: that is ReLU in the middle. This block uses GELU, which dips below zero."),
    (_gelu_tanh, "Close: that is the tanh approximation of GELU. The block uses the exact one, PyTorch's default."),
    (lambda z: z * torch.sigmoid(z), "That is SiLU in the middle; this block uses GELU."),
)


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _both(got, want) -> tuple[str, str]:
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _input(call) -> str:
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        return ", ".join(f"{name} = {_show(t)}" for name, t in zip(NAMES, call.args, strict=True))
    return ", ".join(f"{name} {tuple(t.shape)}" for name, t in zip(NAMES, call.args, strict=True))


def _judge(call):
    where = f"feed_forward on {_input(call)}"
    if call.error:
        error = call.error
        if "asks you to write" in error or ("cannot import name" in error and "groundup" in error):
            return False, (
                f"{where}: {error}. This exercise asks you to fix feed_forward yourself, so groundup's own is not "
                "there when your function is judged."
            )
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Keep the function defined with def at the top level of your code: it is "
                "called again, on other inputs, in a fresh run that keeps only your imports and definitions."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. The function is called again in a fresh run that keeps only your imports, "
                "functions and plain constants: compute everything from its own arguments."
            )
        return False, f"{where} raised an error: {error}"
    x = call.args[0]
    want = _block(*call.args)
    got = call.value if isinstance(call.value, torch.Tensor) else None
    if got is None:
        kind = "nothing" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}. It should return a tensor of shape {tuple(want.shape)}."
    if tuple(got.shape) != tuple(want.shape):
        return False, f"{where} returned shape {tuple(got.shape)}; it should be {tuple(x.shape)}, the shape of x."
    if not got.is_floating_point() or torch.isnan(got).any():
        return False, f"{where} returned no ordinary real numbers (an integer type, or NaN)."
    if torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL):
        return True, ""
    if sum(t.numel() for t in call.args) <= PRINTABLE:
        mine, right = _both(got, want)
        shown = f"{where} gave {mine}; the right output is {right}."
    else:
        first = tuple(int(i) for i in (~torch.isclose(got.double(), want, atol=ATOL, rtol=RTOL)).nonzero()[0][:-1])
        mine, right = _both(got[first], want[first])
        shown = f"{where} differs in row {first}: {mine} where the right output has {right}."
    for act, said in MISTAKES:
        if torch.allclose(got.double(), _block(*call.args, act=act), atol=ATOL, rtol=RTOL):
            return False, f"{shown} {said}"
    return False, shown


def _program(ns):
    block, x, by_hand = ns.get("block"), ns.get("x"), ns.get("by_hand")
    state = block.state_dict() if hasattr(block, "state_dict") else {}
    if any(name not in state for name in _STATE):
        return False, "Keep `block` as the starter code builds it: expand, GELU, contract."
    W1, b1, W2, b2 = (state[name].double() for name in _STATE)
    true_count = sum(t.numel() for t in state.values())
    n_params = ns.get("n_params")
    if n_params != true_count:
        return False, f"`n_params` should count every number in the block's weights and biases: there are {true_count}."
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != W1.shape[1]:
        return False, f"`x` should hold token vectors of width {W1.shape[1]}, one per row."
    if not isinstance(by_hand, torch.Tensor) or by_hand.shape != x.shape or torch.isnan(by_hand).any():
        return False, f"`by_hand` should be feed_forward's output for `x`, of shape {tuple(x.shape)}."
    # Recomputed here from the block's own parameters: the by-hand pass must be the block's.
    expected = _block(x, W1.T, b1, W2.T, b2)
    if not torch.allclose(by_hand.double(), expected, atol=1e-5):
        return False, (
            "`by_hand` does not match the block. Call feed_forward with the transposes of the weights nn.Linear "
            "stores, and keep the rest of the program as it was."
        )
    return True, ""


def check(ns, probed=None):
    if not probed:
        return False, "feed_forward was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    ok, message = _program(ns)
    if not ok:
        return False, message
    return True, (
        f"feed_forward is right on {len(probed)} inputs it had never seen, and your pass matches the block for both "
        "tokens. The block holds "
        f"{ns['n_params']} parameters, and W1 is stored as (hidden, d_model), the transpose of the formula's."
    )

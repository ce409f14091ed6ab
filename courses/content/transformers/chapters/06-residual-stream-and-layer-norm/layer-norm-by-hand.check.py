import torch


def _layer_norm(x, weight, bias, eps, correction=0, dim=-1):
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def _check_layer_norm(x, by_hand, weight, bias, eps):
    if not isinstance(by_hand, torch.Tensor) or by_hand.shape != x.shape:
        return False, f"`by_hand` should have the shape of `x`, {tuple(x.shape)}: one normalised row per token."
    if torch.isnan(by_hand).any():
        return False, "`by_hand` holds NaN. Divide by the square root of the variance plus eps, never of zero."
    by_hand = by_hand.float()
    if torch.allclose(by_hand, _layer_norm(x, weight, bias, eps), atol=1e-5):
        return True, ""
    if torch.allclose(by_hand, _layer_norm(x, weight, bias, eps, correction=1), atol=1e-5):
        return False, (
            f"LayerNorm is off by a constant factor: torch.var divides by d - 1 = {x.shape[-1] - 1} unless told "
            f"otherwise, while layer norm takes the plain mean of the squared deviations, dividing by d = {x.shape[-1]}."
        )
    if x.shape[0] > 1 and torch.allclose(by_hand, _layer_norm(x, weight, bias, eps, dim=0), atol=1e-5):
        return (
            False,
            "LayerNorm centres along the first axis here, across the tokens. It works within each token: along the last axis.",
        )
    if torch.allclose(by_hand, _layer_norm(x, torch.ones_like(weight), torch.zeros_like(bias), eps), atol=1e-5):
        return False, "The rows are normalised, but the layer's gain and shift are missing."
    return False, "`by_hand` does not match nn.LayerNorm. Centre each row, divide by its spread, then gain and shift."


def _check_rms_norm(x, rms_by_hand, weight, eps):
    if not isinstance(rms_by_hand, torch.Tensor) or rms_by_hand.shape != x.shape:
        return False, f"`rms_by_hand` should have the shape of `x`, {tuple(x.shape)}."
    if torch.isnan(rms_by_hand).any():
        return False, "`rms_by_hand` holds NaN. Divide each row by its root mean square, plus eps under the root."
    rms_by_hand = rms_by_hand.float()
    square_mean = x.pow(2).mean(dim=-1, keepdim=True)
    if torch.allclose(rms_by_hand, x / torch.sqrt(square_mean + eps) * weight, atol=1e-5):
        return True, ""
    d = x.shape[-1]
    if torch.allclose(rms_by_hand, x / x.norm(dim=-1, keepdim=True) * weight, atol=1e-5):
        return False, (
            f"RMSNorm comes out {d**0.5:.2f} times too small, the square root of d = {d}: the length of a row is "
            "the root of the sum of its squares, and RMSNorm divides by the root of their mean."
        )
    centred = x - x.mean(dim=-1, keepdim=True)
    if torch.allclose(
        rms_by_hand, centred / torch.sqrt(centred.pow(2).mean(dim=-1, keepdim=True) + eps) * weight, atol=1e-5
    ):
        return False, "RMSNorm does not centre the rows first; that is the step it drops from LayerNorm."
    return (
        False,
        "`rms_by_hand` does not match nn.RMSNorm. Divide each row by its root mean square, then apply the gain.",
    )


def _show(t) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(f"{v:.3f}".rstrip("0").rstrip(".") for v in t.tolist()) + "]"
    return "[" + ", ".join(_show(row) for row in t) + "]"


def _judge(call):
    x, ln, rms = call.args
    where = f"norms_by_hand on x = {_show(x)}" if x.numel() <= 4 else f"norms_by_hand on x of shape {tuple(x.shape)}"
    where += f" (ln.eps = {ln.eps:g}, rms.eps = {rms.eps:g}, gains and shift drawn at random)"
    if call.error:
        if "is not available here" in call.error:
            return False, (
                f"{where} stopped: {call.error}. Calling ln or rms runs the library's norm: compute the "
                "statistics yourself, from their weight, bias and eps."
            )
        return False, f"{where} raised an error: {call.error}"
    value = call.value
    if not isinstance(value, tuple | list) or len(value) != 2:
        return False, f"{where} returned {type(value).__name__}; it should return two tensors, (by_hand, rms_by_hand)."
    x = x.float()
    weight, bias, gain = ln.weight.detach().float(), ln.bias.detach().float(), rms.weight.detach().float()
    passed, message = _check_layer_norm(x, value[0], weight, bias, ln.eps)
    if not passed:
        return False, f"{where}: {message}{_values(x, value[0], _layer_norm(x, weight, bias, ln.eps))}"
    passed, message = _check_rms_norm(x, value[1], gain, rms.eps)
    if not passed:
        right = x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + rms.eps) * gain
        return False, f"{where}: LayerNorm matches. {message}{_values(x, value[1], right)}"
    return True, ""


def _values(x, got, right) -> str:
    """Both outputs, for an input small enough to read."""
    if x.numel() > 4 or not isinstance(got, torch.Tensor) or got.shape != right.shape:
        return ""
    return f" On this row it gave {_show(got.float())}; the right output is {_show(right)}."


def check(ns, probed=None):
    if not probed:
        return False, "norms_by_hand was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        passed, message = _judge(call)
        if not passed:
            return False, message
    return True, (
        f"Both match the library on {len(probed)} inputs your program never saw. Before its gain and shift, every "
        "row now has mean 0 and variance 1 whatever its size was; RMSNorm gets a steady size with one statistic "
        "fewer: no mean, no shift."
    )

import torch


def _layer_norm(x, weight, bias, eps, correction=0, dim=-1):
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def _check_layer_norm(x, by_hand, weight, bias):
    if not isinstance(by_hand, torch.Tensor) or by_hand.shape != x.shape:
        return False, f"`by_hand` should have the shape of `x`, {tuple(x.shape)}: one normalised row per token."
    if torch.isnan(by_hand).any():
        return False, "`by_hand` holds NaN. Divide by the square root of the variance plus eps, never of zero."
    by_hand = by_hand.float()
    if torch.allclose(by_hand, _layer_norm(x, weight, bias, 1e-5), atol=1e-5):
        return True, ""
    if torch.allclose(by_hand, _layer_norm(x, weight, bias, 1e-5, correction=1), atol=1e-5):
        return False, (
            f"LayerNorm is off by a constant factor: torch.var divides by d - 1 = {x.shape[-1] - 1} unless told "
            f"otherwise, while layer norm takes the plain mean of the squared deviations, dividing by d = {x.shape[-1]}."
        )
    if torch.allclose(by_hand, _layer_norm(x, weight, bias, 1e-5, dim=0), atol=1e-5):
        return False, "LayerNorm centres across the tokens here. It works within each token: along the last axis."
    if torch.allclose(by_hand, _layer_norm(x, torch.ones_like(weight), torch.zeros_like(bias), 1e-5), atol=1e-5):
        return False, "The rows are normalised, but the layer's gain and shift are missing."
    return False, "`by_hand` does not match nn.LayerNorm. Centre each row, divide by its spread, then gain and shift."


def _check_rms_norm(x, rms_by_hand, weight):
    if not isinstance(rms_by_hand, torch.Tensor) or rms_by_hand.shape != x.shape:
        return False, f"`rms_by_hand` should have the shape of `x`, {tuple(x.shape)}."
    if torch.isnan(rms_by_hand).any():
        return False, "`rms_by_hand` holds NaN. Divide each row by its root mean square, plus eps under the root."
    rms_by_hand = rms_by_hand.float()
    square_mean = x.pow(2).mean(dim=-1, keepdim=True)
    if torch.allclose(rms_by_hand, x / torch.sqrt(square_mean + 1e-6) * weight, atol=1e-5):
        return True, ""
    d = x.shape[-1]
    if torch.allclose(rms_by_hand, x / x.norm(dim=-1, keepdim=True) * weight, atol=1e-5):
        return False, (
            f"RMSNorm comes out {d**0.5:.2f} times too small, the square root of d = {d}: the length of a row is "
            "the root of the sum of its squares, and RMSNorm divides by the root of their mean."
        )
    centred = x - x.mean(dim=-1, keepdim=True)
    if torch.allclose(
        rms_by_hand, centred / torch.sqrt(centred.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * weight, atol=1e-5
    ):
        return False, "RMSNorm does not centre the rows first; that is the step it drops from LayerNorm."
    return (
        False,
        "`rms_by_hand` does not match nn.RMSNorm. Divide each row by its root mean square, then apply the gain.",
    )


def check(ns):
    x, ln, rms = ns.get("x"), ns.get("ln"), ns.get("rms")
    ln_state = ln.state_dict() if hasattr(ln, "state_dict") else {}
    rms_state = rms.state_dict() if hasattr(rms, "state_dict") else {}
    if "weight" not in ln_state or "bias" not in ln_state or "weight" not in rms_state:
        return False, "Keep `ln` and `rms` as the starter code builds them: nn.LayerNorm and nn.RMSNorm."
    weight, bias, gain = ln_state["weight"].float(), ln_state["bias"].float(), rms_state["weight"].float()
    d = weight.shape[0]
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[-1] != d or torch.isnan(x).any():
        return False, f"Keep `x` as it was: rows of {d} ordinary numbers, one per token."
    x = x.float()
    passed, message = _check_layer_norm(x, ns.get("by_hand"), weight, bias)
    if not passed:
        return False, message
    passed, message = _check_rms_norm(x, ns.get("rms_by_hand"), gain)
    if not passed:
        return False, "LayerNorm matches. " + message
    return True, (
        "Both match the library. Before its gain and shift, every row now has mean 0 and variance 1 whatever its "
        "size was; RMSNorm gets a steady size with one statistic fewer: no mean, no shift."
    )

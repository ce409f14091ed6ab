import torch
import torch.nn.functional as F

_NAMES = ("expand.weight", "expand.bias", "contract.weight", "contract.bias")


def check(ns):
    block, x, by_hand = ns.get("block"), ns.get("x"), ns.get("by_hand")
    state = block.state_dict() if hasattr(block, "state_dict") else {}
    if any(name not in state for name in _NAMES):
        return False, "Keep `block` as the starter code builds it: a FeedForward from groundup."
    W1, b1, W2, b2 = (state[name].float() for name in _NAMES)
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != W1.shape[1]:
        return False, f"`x` should hold token vectors of width {W1.shape[1]}, one per row."
    if not isinstance(by_hand, torch.Tensor) or by_hand.shape != x.shape:
        return (
            False,
            f"`by_hand` should have the shape of `x`, {tuple(x.shape)}: the block gives back one vector per token.",
        )
    if torch.isnan(by_hand).any():
        return False, "`by_hand` holds NaN. Build it only from `x` and the block's four parameters."
    by_hand, x = by_hand.float(), x.float()
    # Recomputed here from the block's own parameters, with torch's GELU.
    h = x @ W1.T + b1
    expected = F.gelu(h) @ W2.T + b2
    n_params = ns.get("n_params")
    true_count = sum(t.numel() for t in state.values())
    if n_params != true_count:
        return False, f"`n_params` should count every number in the block's weights and biases: there are {true_count}."
    if torch.allclose(by_hand, expected, atol=1e-5):
        return True, (
            f"Your pass matches the block for both tokens. {true_count} parameters: two matrices of {W1.numel()} "
            f"numbers and two biases, and W1 is stored as {tuple(W1.shape)}, the transpose of the formula's."
        )
    if torch.allclose(by_hand, h @ W2.T + b2, atol=1e-5):
        return False, (
            "The two layers run straight into each other, which makes them one linear map. The block applies its "
            "non-linearity to the hidden numbers in between."
        )
    if torch.allclose(by_hand, F.relu(h) @ W2.T + b2, atol=1e-5):
        return False, "Close: that is ReLU in the middle. This block uses GELU, the smooth curve that dips below zero."
    if torch.allclose(by_hand, F.gelu(h, approximate="tanh") @ W2.T + b2, atol=1e-5):
        return False, "Close: that is the tanh approximation of GELU. The block uses the exact one, PyTorch's default."
    return False, "`by_hand` does not match the block. Expand with W1 and b1, apply GELU, then contract with W2 and b2."

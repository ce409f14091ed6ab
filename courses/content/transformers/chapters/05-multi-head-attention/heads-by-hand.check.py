import torch
from torch import nn

_ROLES = ("query", "key", "value")


def _heads(t, n_heads):
    batch, n, d = t.shape
    return t.reshape(batch, n, n_heads, d // n_heads).transpose(1, 2)


def _mha(x, W, b, W_out, b_out, n_heads):
    """Causal multi-head attention from the packed weights, written here so nothing is trusted."""
    batch, n, d = x.shape
    q, k, v = (_heads(x @ W[i * d : (i + 1) * d].T + b[i * d : (i + 1) * d], n_heads) for i in range(3))
    scores = q @ k.transpose(-2, -1) / (d // n_heads) ** 0.5
    hidden = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    weights = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
    merged = (weights @ v).transpose(1, 2).reshape(batch, n, d)
    return merged @ W_out.T + b_out


def _block_of(t, W):
    """Which block of the packed matrix (0, 1, 2) `t` is, or None."""
    d = W.shape[1]
    for i in range(3):
        if (
            isinstance(t, torch.Tensor)
            and t.shape == W[i * d : (i + 1) * d].shape
            and torch.equal(t.float(), W[i * d : (i + 1) * d])
        ):
            return i
    return None


def _starter_layer():
    """The layer and input as the starter code makes them: the same seed, sizes and biases."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        mha.in_proj_bias.normal_(std=0.5)
    return mha.state_dict(), torch.randn(1, 5, 8)


def check(ns):
    mha, x, out, n_heads = ns.get("mha"), ns.get("x"), ns.get("out"), ns.get("n_heads")
    state = mha.state_dict() if hasattr(mha, "state_dict") else {}
    names = ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")
    if any(name not in state for name in names):
        return False, "Keep `mha` as the starter code builds it: an nn.MultiheadAttention layer."
    W, b, W_out, b_out = (state[name].float() for name in names)
    d = W.shape[1]
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d:
        return False, f"Keep `x` as it was: a batch of token vectors of width {d}."
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d % n_heads:
        return False, f"Keep `n_heads` as it was: a whole number of heads that divides the width {d}."
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        return False, f"`out` should have the shape of `x`, {tuple(x.shape)}: one vector per token."
    if torch.isnan(out).any():
        return False, "`out` holds NaN. Build Wq, Wk and Wv by slicing the packed matrix, nothing else."
    # The layer and the input are the starter's: zeroed or equal blocks would make any cut look right.
    state0, x0 = _starter_layer()
    same = all(torch.equal(state[name].float(), state0[name]) for name in names)
    if not same or x.shape != x0.shape or not torch.equal(x.float(), x0) or n_heads != 2:
        return False, (
            "Keep `mha`, `x` and `n_heads` as the starter code makes them, seed and random biases included: the "
            "check works the layer out from the same numbers. Only the slices need to change."
        )
    expected = _mha(x.float(), W, b, W_out, b_out, n_heads)
    slices = [ns.get(name) for name in ("Wq", "Wk", "Wv", "bq", "bk", "bv")]
    right = [W[:d], W[d : 2 * d], W[2 * d :], b[:d], b[d : 2 * d], b[2 * d :]]
    sliced = all(
        isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got.float(), want)
        for got, want in zip(slices, right, strict=True)
    )
    if sliced and torch.allclose(out.float(), expected, atol=1e-5):
        return True, (
            f"Your {n_heads} heads reproduce nn.MultiheadAttention: rows 0-{d - 1} of the packed matrix are the "
            f"query projection, {d}-{2 * d - 1} the key and {2 * d}-{3 * d - 1} the value, and the same cut splits "
            "the bias."
        )
    blocks = [_block_of(ns.get(name), W) for name in ("Wq", "Wk", "Wv")]
    shapes_ok = all(
        isinstance(ns.get(name), torch.Tensor) and tuple(ns[name].shape) == (d, d) for name in ("Wq", "Wk", "Wv")
    )
    if not shapes_ok:
        return False, f"Wq, Wk and Wv should each be a ({d}, {d}) block of rows of the packed ({3 * d}, {d}) matrix."
    if blocks == [0, 0, 0]:
        return False, (
            f"All three projections still read the first {d} rows, the query's. The packed matrix stacks three "
            f"blocks of {d} rows: which block belongs to the key, and which to the value?"
        )
    if None not in blocks and len(set(blocks)) == 3 and blocks != [0, 1, 2]:
        got = ", ".join(
            f"{name} reads the {_ROLES[i]} rows" for name, i in zip(("Wq", "Wk", "Wv"), blocks, strict=True)
        )
        return False, f"The three blocks are in the wrong order ({got}). PyTorch stacks query, key, value."
    if blocks == [0, 1, 2] and not sliced:
        return False, "The three matrices are right, but the biases are not: the packed bias is cut like the matrix."
    if sliced:
        return False, "The slices are right, but `out` is not the layer's output computed from them."
    return (
        False,
        "`out` does not match the layer. Slice Wq, Wk and Wv as whole blocks of rows and keep the rest as it was.",
    )

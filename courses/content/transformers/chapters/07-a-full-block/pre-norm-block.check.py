import torch
from groundup import FeedForward, LayerNorm, MultiHeadAttention


def _load(module, state):
    module.load_state_dict({name: t.float() for name, t in state.items()})
    return module


def check(ns):
    pieces = {name: ns.get(name) for name in ("norm1", "attn", "norm2", "ffn")}
    states = {name: p.state_dict() if hasattr(p, "state_dict") else {} for name, p in pieces.items()}
    if "q_proj.weight" not in states["attn"] or "expand.weight" not in states["ffn"]:
        return False, "Keep `attn` and `ffn` as the starter code builds them, from groundup."
    if any(set(states[name]) != {"weight", "bias"} for name in ("norm1", "norm2")):
        return False, "Keep `norm1` and `norm2` as the starter code builds them: two LayerNorms from groundup."
    x, out, n_heads = ns.get("x"), ns.get("out"), ns.get("n_heads")
    d = states["norm1"]["weight"].shape[0]
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != d or torch.isnan(x).any():
        return False, f"Keep `x` as it was: a batch of token vectors of width {d}."
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d % n_heads:
        return False, f"Keep `n_heads` as it was: a number of heads that divides the width {d}."
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        return False, f"`out` should have the shape of `x`, {tuple(x.shape)}: a block keeps the stream's shape."
    if torch.isnan(out).any():
        return False, "`out` holds NaN. Build it only from `x` and the four pieces."
    # The pieces rebuilt from their weights, then the block in every arrangement worth naming.
    norm1, norm2 = _load(LayerNorm(d), states["norm1"]), _load(LayerNorm(d), states["norm2"])
    attn, ffn = _load(MultiHeadAttention(d, n_heads), states["attn"]), _load(FeedForward(d), states["ffn"])
    x, out = x.float(), out.float()
    with torch.no_grad():
        h = x + attn(norm1(x))
        if torch.allclose(out, h + ffn(norm2(h)), atol=1e-5):
            return True, (
                "Your block matches PyTorch's pre-norm layer. Each sublayer reads a normalised copy and adds to the "
                "stream, so `out - x` is exactly what the block wrote, and the stream itself is never rescaled."
            )
        wrong = {
            "It is still post-norm: the sum is normalised after each sublayer. Move each norm to the copy the "
            "sublayer reads, and add the result to the stream as it was.": lambda: _post(x, attn, ffn, norm1, norm2),
            "The attention step replaces the stream instead of adding to it: keep the residual connection around "
            "attention.": lambda: (lambda g: g + ffn(norm2(g)))(attn(norm1(x))),
            "The feed-forward step replaces the stream instead of adding to it: keep the residual connection around "
            "it too.": lambda: ffn(norm2(h)),
            "The stream itself is normalised before each addition. Only the sublayer's input should be the "
            "normalised copy.": lambda: (lambda g: norm2(g) + ffn(norm2(g)))(norm1(x) + attn(norm1(x))),
            "The two norms are swapped: norm1 belongs before attention, norm2 before the feed-forward block.": lambda: (
                lambda g: g + ffn(norm1(g))
            )(x + attn(norm2(x))),
            "Attention sees the future: the decoder block must be causal, as PyTorch's layer is with its "
            "mask.": lambda: (lambda g: g + ffn(norm2(g)))(x + attn(norm1(x), causal=False)),
        }
        for message, arrangement in wrong.items():
            if torch.allclose(out, arrangement(), atol=1e-5):
                return False, message
    return False, "`out` does not match a pre-norm block. Each sublayer reads a normalised copy and adds its result."


def _post(x, attn, ffn, norm1, norm2):
    h = norm1(x + attn(x))
    return norm2(h + ffn(h))

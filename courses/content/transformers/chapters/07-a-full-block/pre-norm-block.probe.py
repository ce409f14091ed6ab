"""The calls that judge pre_norm_block on inputs no program has seen: fresh norms, attention and
feed-forward blocks, every weight drawn from the seed (gains and shifts far from 1 and 0, so a
misplaced norm shows), on streams from one token to a batch of three sequences, with layer norm or
RMSNorm, GELU or SwiGLU, and plain or rotary attention."""

import torch
from groundup import FeedForward, LayerNorm, MultiHeadAttention, RMSNorm, RotaryAttention, SwiGLU

# PyTorch's own block and attention, which would do the arrangement for you, and the course's
# finished block and model.
BY_HAND = [
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "aten::_transformer_encoder_layer_fwd",
    "aten::_native_multi_head_attention",
    "groundup.Block",
    "groundup.TinyGPT",
    "groundup.to_torch_layer",
]


def _fill(module, g, *, gain=False):
    """Every parameter of `module` redrawn from g: gains around 1, everything else around 0."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if gain and name == "weight":
                p.copy_(1 + 0.4 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.4 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
    return module.eval()


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    # (batch, n, d_model, n_heads, norm, feed-forward, attention)
    for batch, n, d, h, norm, ffn, attn in (
        (1, 3, 4, 1, LayerNorm, FeedForward, MultiHeadAttention),
        (2, 5, 8, 2, LayerNorm, FeedForward, MultiHeadAttention),
        (1, 1, 8, 2, LayerNorm, FeedForward, MultiHeadAttention),
        (1, 7, 12, 3, RMSNorm, SwiGLU, MultiHeadAttention),
        (3, 4, 16, 4, LayerNorm, FeedForward, RotaryAttention),
    ):
        x = 2 * torch.randn(batch, n, d, generator=g)
        pieces = (
            _fill(norm(d), g, gain=True),
            _fill(attn(d, h), g),
            _fill(norm(d), g, gain=True),
            _fill(ffn(d), g),
        )
        made.append(("pre_norm_block", (x, *pieces)))
    return made

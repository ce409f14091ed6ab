import torch
from groundup import (
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
    heads = attn.n_heads
    q, k, v = (split_heads(proj(x), heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
    out, _ = attention(q, k, v, causal=causal)  # (batch, heads, n, d_head)
    return attn.out_proj(merge_heads(out))


class Block(nn.Module):
    """A pre-norm decoder block whose parts are chosen by keyword. Create them in this order and
    under these names: norm1, attn, norm2, ffn.

    norm="layer": LayerNorm(d_model) for both norms; norm="rms": RMSNorm(d_model).
    rotary=False: MultiHeadAttention(d_model, n_heads); rotary=True: RotaryAttention(d_model, n_heads).
    ffn="gelu": FeedForward(d_model, hidden); ffn="swiglu": SwiGLU(d_model, hidden).
    Any other norm or ffn raises ValueError, with a message that names the choices.
    """

    def __init__(self, d_model, n_heads, hidden=None, *, ffn="gelu", norm="layer", rotary=False):
        super().__init__()
        if norm not in ("layer", "rms"):
            raise ValueError(f"norm must be 'layer' or 'rms', not {norm!r}")
        if ffn not in ("gelu", "swiglu"):
            raise ValueError(f"ffn must be 'gelu' or 'swiglu', not {ffn!r}")
        make_norm = LayerNorm if norm == "layer" else RMSNorm
        self.norm1 = make_norm(d_model)
        if rotary:
            self.attn = RotaryAttention(d_model, n_heads)
        else:
            self.attn = MultiHeadAttention(d_model, n_heads)
        self.norm2 = make_norm(d_model)
        if ffn == "gelu":
            self.ffn = FeedForward(d_model, hidden)
        else:
            self.ffn = SwiGLU(d_model, hidden)

    def forward(self, x):
        return pre_norm_block(x, self.norm1, self.attn, self.norm2, self.ffn)


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

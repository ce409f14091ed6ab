"""The calls that judge rotary_attention and Block on what no program has seen: rotary attention
with fresh weights on streams from one token to a batch of three sequences, causal and not, and
the block built with every option, and with options it must refuse."""

import torch
from groundup import MultiHeadAttention

# PyTorch's own attention, which would do the projecting and splitting for you, and the course's
# finished model, which holds a finished block.
BY_HAND = [
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.TransformerEncoderLayer",
    "aten::_native_multi_head_attention",
    "groundup.TinyGPT",
]


def _attention(d, h, g):
    """A MultiHeadAttention whose weights are all drawn from g."""
    attn = MultiHeadAttention(d, h)
    with torch.no_grad():
        for p in attn.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / (p.shape[1] ** 0.5 if p.dim() == 2 else 2))
    return attn.eval()


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    # (batch, n, d_model, n_heads, causal)
    for batch, n, d, h, causal in (
        (1, 3, 2, 1, True),
        (2, 5, 8, 2, True),
        (1, 1, 4, 1, True),
        (1, 6, 12, 3, False),
        (3, 7, 16, 4, True),
    ):
        x = 1.5 * torch.randn(batch, n, d, generator=g)
        made.append(("rotary_attention", (x, _attention(d, h, g)), {"causal": causal}))
    d = 4 * int(torch.randint(2, 6, (1,), generator=g))
    made += [
        ("Block", (d, 2)),
        ("Block", (d, 4), {"norm": "rms"}),
        ("Block", (d, 2), {"ffn": "swiglu"}),
        ("Block", (d, 2, 3 * d), {"ffn": "gelu", "norm": "rms", "rotary": True}),
        ("Block", (d, 2), {"norm": "batch"}),
        ("Block", (d, 2), {"ffn": "relu"}),
    ]
    return made

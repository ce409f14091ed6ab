"""The calls that judge split_heads, merge_heads and multi_head_attention on inputs no program has
seen: a tiny split and merge of distinct whole numbers, where a reshape without the transpose or
the wrong order of the pieces shows at a glance; then random shapes with no batch axis, one and
two, head counts from 1 to 4, and the layer with and without the mask, its four projections
drawn afresh."""

import torch
from torch import nn

# The library's own multi-head attention: the exercise asks for the heads to be split, attended
# and joined here, not handed to PyTorch's layer.
BY_HAND = [
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch._native_multi_head_attention",
    "aten::_native_multi_head_attention",
]


def _distinct(g, *shape):
    """Whole numbers 0, 1, 2, ... in a random order: every entry tells where it came from."""
    n = 1
    for size in shape:
        n *= size
    return torch.randperm(n, generator=g).float().reshape(shape)


def _layer(g, d):
    """A projection from d to d with weights and bias drawn from g (nn.Linear draws from the global
    generator, which the probe does not control)."""
    layer = nn.Linear(d, d)
    with torch.no_grad():
        layer.weight.copy_(torch.randn(d, d, generator=g) / d**0.5)
        layer.bias.copy_(torch.randn(d, generator=g) * 0.5)
    return layer.requires_grad_(False)


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [("split_heads", (_distinct(g, 2, 4), 2)), ("merge_heads", (_distinct(g, 2, 2, 2),))]
    # (leading axes, tokens, heads, head width)
    for lead, n, h, d_head in (((), 3, 2, 3), ((2,), 4, 4, 2), ((2, 3), 5, 2, 4), ((3,), 2, 1, 6)):
        x = torch.randn(*lead, n, h * d_head, generator=g)
        made.append(("split_heads", (x, h)))
        made.append(("merge_heads", (torch.randn(*lead, h, n, d_head, generator=g),)))
    # (leading axes, tokens, width, heads, causal)
    for lead, n, d, h, causal in (
        ((), 4, 6, 2, True),
        ((2,), 5, 8, 4, True),
        ((2,), 3, 6, 3, False),
        ((2, 2), 4, 8, 2, True),
        ((1,), 1, 4, 2, True),
        ((3,), 6, 4, 1, False),
    ):
        x = torch.randn(*lead, n, d, generator=g)
        projections = tuple(_layer(g, d) for _ in range(4))
        made.append(("multi_head_attention", (x, *projections, h), {"causal": causal}))
    return made

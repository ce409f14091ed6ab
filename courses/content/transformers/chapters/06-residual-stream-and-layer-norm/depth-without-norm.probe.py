"""The calls that judge pre_norm_step on inputs no program has seen: fresh feed-forward blocks and
layer norms (gains and shifts far from 1 and 0, so a misplaced norm shows) on streams from one
token to a batch of sequences."""

import torch
from groundup import FeedForward, LayerNorm


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for shape in ((1, 4), (3, 8), (2, 5, 16), (1, 1, 8)):
        d = shape[-1]
        block, norm = FeedForward(d), LayerNorm(d)
        with torch.no_grad():
            for p in block.parameters():
                p.copy_(torch.randn(p.shape, generator=g) / (p.shape[-1] ** 0.5 if p.dim() == 2 else 2))
            norm.weight.copy_(1 + 0.5 * torch.randn(d, generator=g))
            norm.bias.copy_(0.5 * torch.randn(d, generator=g))
        x = 3 * torch.randn(*shape, generator=g) + 1
        made.append(("pre_norm_step", (block.eval(), norm.eval(), x)))
    return made

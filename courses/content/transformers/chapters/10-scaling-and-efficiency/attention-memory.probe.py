"""The calls that judge attention_saved_bytes on sizes no program has seen: a handful of batches,
heads, lengths and head widths, each measured with both kernels."""

import torch


def _pick(g, *choices):
    return choices[int(torch.randint(0, len(choices), (1,), generator=g))]


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for _ in range(3):
        batch, heads, n, d_head = _pick(g, 1, 2), _pick(g, 1, 2, 3), _pick(g, 48, 96, 160, 320), _pick(g, 8, 16, 24)
        for fused in (False, True):
            made.append(("attention_saved_bytes", (batch, heads, n, d_head, fused)))
    return made

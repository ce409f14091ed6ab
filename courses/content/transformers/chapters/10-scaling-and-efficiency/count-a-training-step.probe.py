"""The calls that judge training_flops on sizes no program has seen: tiny ones, middling ones and
one far too big to build or to run through PyTorch's counter."""

import torch

# PyTorch's counter is not the learner's, and neither is a model to measure (the forward count,
# Part 10's first exercise, stays theirs to call).
BY_HAND = ["torch.utils.flop_counter.FlopCounterMode", "groundup.TinyGPT", "groundup.Block"]


def _pick(g, low, high):
    return int(torch.randint(low, high + 1, (1,), generator=g))


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    sizes = [
        (_pick(g, 2, 9), 2 * _pick(g, 1, 3), 1, _pick(g, 1, 3), _pick(g, 2, 6)),
        (_pick(g, 100, 5000), 16 * _pick(g, 1, 16), _pick(g, 1, 12), _pick(g, 1, 8), _pick(g, 16, 512)),
        (_pick(g, 30000, 60000), 128 * _pick(g, 60, 110), _pick(g, 60, 110), _pick(g, 1, 8), 2048),
    ]
    return [("training_flops", args) for args in sizes]

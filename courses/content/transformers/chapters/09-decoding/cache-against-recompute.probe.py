"""The calls that judge cached_step on inputs no program has seen: a small TinyGPT with fresh
weights, and caches that already hold keys and values drawn at random (not made by the model), so
a step that ignores what the cache holds gives other logits. One cache is used by two steps in a
row, so the second sees whether the first appended its keys and values; one step feeds several
new tokens after cached ones, whose queries each sit at their own position."""

import torch
from groundup import TinyGPT


class Cache:
    """What cached_step reads and writes: per block, keys and values of shape (batch, n_heads,
    positions, d_head), and how many positions they hold."""

    def __init__(self):
        self.keys, self.values = [], []

    def __len__(self):
        return self.keys[0].shape[2] if self.keys else 0


def _model(g):
    model = TinyGPT(13, 8, 2, 2, 10).eval()
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.randn(p.shape, generator=g) * (0.8 if p.dim() > 1 else 0.3))
    return model


def _filled(g, batch, positions):
    cache = Cache()
    for _ in range(2):  # one pair per block
        cache.keys.append(torch.randn(batch, 2, positions, 4, generator=g))
        cache.values.append(torch.randn(batch, 2, positions, 4, generator=g))
    return cache


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    model = _model(g)
    shared = _filled(g, 1, 3)
    return [
        ("cached_step", (model, torch.randint(0, 13, (2, 4), generator=g), Cache())),  # a prompt, nothing cached
        ("cached_step", (model, torch.randint(0, 13, (1, 1), generator=g), shared)),  # one token after three
        ("cached_step", (model, torch.randint(0, 13, (1, 1), generator=g), shared)),  # and the next one
        ("cached_step", (model, torch.randint(0, 13, (2, 3), generator=g), _filled(g, 2, 2))),  # three after two
    ]

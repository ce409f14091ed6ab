"""The calls that judge feed_forward on inputs no program has seen: one tiny call of small whole
numbers, drawn until a missing activation or the wrong one would show in it, a single token, and
random ones of several widths, with and without leading batch axes. F.gelu is allowed here; the
last exercise of the part asks for it by hand."""

import torch


def _small(g, *shape):
    return torch.randint(-2, 3, shape, generator=g).float()


def _tiny(g):
    """One token of width 2, a hidden width of 3, whole numbers from -2 to 2: non-zero biases and
    hidden numbers from -3 to 3 on both sides of zero, one of them -1 or -2."""
    while True:
        x, w1, b1, w2, b2 = _small(g, 1, 2), _small(g, 2, 3), _small(g, 3), _small(g, 3, 2), _small(g, 2)
        h = x @ w1 + b1
        readable = bool((x != 0).all() and (h.abs() <= 3).all() and (h != 0).all() and (w2 != 0).any(dim=1).all())
        if readable and (b2 != 0).all() and (h > 0).any() and ((h < 0) & (h >= -2)).any():
            return x, w1, b1, w2, b2


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [("feed_forward", _tiny(g))]
    for lead, n, d, h in (((), 1, 4, 16), ((), 3, 6, 10), ((2,), 4, 4, 16), ((2, 3), 2, 8, 32)):
        x = torch.randn(*lead, n, d, generator=g) * 1.5
        w1, w2 = torch.randn(d, h, generator=g) / d**0.5, torch.randn(h, d, generator=g) / h**0.5
        b1, b2 = torch.randn(h, generator=g) * 0.5, torch.randn(d, generator=g) * 0.5
        made.append(("feed_forward", (x, w1, b1, w2, b2)))
    return made

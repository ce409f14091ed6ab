"""The calls that judge position_frequencies, sinusoidal_positions and rotate on sizes, bases and
positions no program has seen: tiny ones with a small base (so that every pair of columns turns
by a readable angle), the usual base of 10,000 and a larger one, rows with leading batch and head
axes, positions that start late (as a cache of keys needs), come in any order or run into the
thousands, and a position list of the wrong length."""

import random

import torch

# What "by hand" rules out: the complex numbers that do a turn in one multiplication.
BY_HAND = [
    "torch.view_as_complex",
    "torch.polar",
    "torch.complex",
    "torch.ops.aten.view_as_complex",
    "torch.ops.aten.polar",
    "torch.ops.aten.complex",
    "aten::view_as_complex",
    "aten::polar",
    "aten::complex",
]


def _small(g, *shape):
    """Whole numbers from -2 to 2, none of the pairs all zero."""
    while True:
        x = torch.randint(-2, 3, shape, generator=g).float()
        pairs = x.reshape(*shape[:-1], shape[-1] // 2, 2)
        if bool((pairs != 0).any(dim=-1).all()):
            return x


def calls(seed):
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed % 2**63)
    small_base = float(rng.choice((4, 9, 16, 25)))
    made = [
        ("position_frequencies", (4,), {"base": small_base}),
        ("position_frequencies", (rng.choice((6, 10)),)),
        ("position_frequencies", (rng.choice((64, 128)),), {"base": float(rng.choice((500000, 1000000)))}),
        ("sinusoidal_positions", (3, 4), {"base": small_base}),
        ("sinusoidal_positions", (rng.randint(20, 60), rng.choice((8, 16, 32)))),
        ("sinusoidal_positions", (rng.randint(5, 9), 6), {"base": float(rng.choice((50, 300)))}),
    ]
    # A tiny rotation: two rows, two pairs, positions that do not start at 0, a small base.
    start = rng.randint(1, 3)
    made.append(("rotate", (_small(g, 2, 4), torch.tensor([start, start + 1])), {"base": small_base}))
    # No positions given: 0, 1, ..., n - 1, with leading batch and head axes.
    made.append(("rotate", (torch.randn(2, 3, 5, 8, generator=g),)))
    # Positions in any order, far along, with a batch axis and another base.
    positions = torch.tensor(rng.sample(range(1000, 4000), 6))
    made.append(("rotate", (torch.randn(3, 6, 16, generator=g), positions), {"base": float(rng.choice((500, 50000)))}))
    # The rows a cache of keys adds during decoding: positions that start late.
    offset = rng.randint(5, 40)
    made.append(("rotate", (torch.randn(1, 2, 3, 6, generator=g), torch.arange(offset, offset + 3))))
    # One position for four rows: refused, rather than applied to every row.
    made.append(("rotate", (torch.randn(4, 8, generator=g), torch.tensor([rng.randint(1, 9)]))))
    return made

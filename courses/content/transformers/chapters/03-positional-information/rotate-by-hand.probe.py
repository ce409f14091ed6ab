"""The calls that judge turn_pairs on rows and angles no program has seen: a tiny one with small
whole numbers and quarter and half turns mixed with other angles, and larger random ones, angles
below zero and beyond a full turn included."""

import math

import torch

# What "by hand" rules out: the complex numbers that do a turn in one multiplication, and the
# course module's finished rotation, which answers this exercise.
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
    "groundup.rotate",
]


def _tiny(g):
    """Two rows of two pairs, whole numbers from -2 to 2 with no pair all zero, turned by angles
    such as 0.5 or 1 radian where both sine and cosine matter."""
    while True:
        x = torch.randint(-2, 3, (2, 4), generator=g).float()
        if bool((x.reshape(2, 2, 2) != 0).any(dim=-1).all()):
            break
    choices = torch.tensor([0.5, 1.0, -1.0, 2.0, math.pi / 3])
    return x, choices[torch.randint(0, len(choices), (2, 2), generator=g)]


def calls(seed):
    g = torch.Generator().manual_seed(seed % 2**63)
    made = [_tiny(g)]
    for n, d in ((1, 2), (5, 8), (7, 16)):
        made.append((torch.randn(n, d, generator=g), (torch.rand(n, d // 2, generator=g) - 0.3) * 20))
    return [("turn_pairs", args) for args in made]

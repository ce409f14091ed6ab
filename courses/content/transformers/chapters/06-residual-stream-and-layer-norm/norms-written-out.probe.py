"""The calls that judge layer_norm, rms_norm, LayerNorm and RMSNorm on inputs no program has seen:
one tiny row of small whole numbers for each function, rows with leading axes (a batch of
sequences), rows so nearly constant that eps decides the answer, an eps other than the default,
and each module built fresh, to read its parameters."""

import torch

# What "by hand" rules out: the library's norms as functions, modules and operators, and the other
# library norms that compute the same statistics under another name (a group norm of one group
# is a layer norm).
BY_HAND = [
    "torch.nn.functional.layer_norm",
    "torch.layer_norm",
    "torch.nn.LayerNorm",
    "torch.nn.functional.rms_norm",
    "torch.rms_norm",
    "torch.nn.RMSNorm",
    "torch.nn.functional.group_norm",
    "torch.group_norm",
    "torch.nn.GroupNorm",
    "torch.nn.functional.batch_norm",
    "torch.batch_norm",
    "torch.nn.functional.instance_norm",
    "torch.instance_norm",
    "aten::layer_norm",
    "aten::native_layer_norm",
    "aten::rms_norm",
    "aten::_fused_rms_norm",
    "aten::group_norm",
    "aten::native_group_norm",
    "aten::batch_norm",
    "aten::native_batch_norm",
    "aten::instance_norm",
]


def _small(g, *shape, low=-3, high=4):
    return torch.randint(low, high, shape, generator=g).float()


def _tiny_row(g):
    """A row of four whole numbers that are not all equal, whose mean is not zero and whose
    deviations are not all the same size: every usual mistake changes the answer."""
    while True:
        x = _small(g, 1, 4, low=-4, high=9)
        centred = x - x.mean()
        if x.mean() != 0 and centred.abs().unique().numel() > 1 and (x != 0).all():
            return x


def _gain(g, d):
    while True:
        gain = _small(g, d, low=-2, high=3)
        if (gain != 0).all() and (gain != 1).any():
            return gain


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [
        ("layer_norm", (_tiny_row(g), _gain(g, 4), _small(g, 4))),
        ("rms_norm", (_tiny_row(g), _gain(g, 4))),
    ]
    for shape in ((2, 3, 8), (5, 16), (1, 1, 6), (3, 2, 4, 12)):
        d = shape[-1]
        x = torch.randn(*shape, generator=g) * 2.5 + torch.randn(*shape[:-1], 1, generator=g) * 3
        gain, shift = 1 + 0.5 * torch.randn(d, generator=g), 0.5 * torch.randn(d, generator=g)
        made.append(("layer_norm", (x, gain, shift)))
        made.append(("rms_norm", (x, gain)))
    # Rows so nearly constant (layer norm) or so small (RMSNorm) that eps is most of the divisor.
    flat = 0.25 + 1e-3 * torch.randn(3, 8, generator=g)
    small = 1e-3 * torch.randn(3, 8, generator=g)
    gain, shift = 1 + 0.5 * torch.randn(8, generator=g), 0.5 * torch.randn(8, generator=g)
    made += [("layer_norm", (flat, gain, shift)), ("rms_norm", (small, gain))]
    # An eps other than the default, given by name.
    x = torch.randn(2, 4, 6, generator=g) * 0.05
    gain, shift = 1 + 0.5 * torch.randn(6, generator=g), 0.5 * torch.randn(6, generator=g)
    made += [("layer_norm", (x, gain, shift), {"eps": 1e-2}), ("rms_norm", (x, gain), {"eps": 1e-2})]
    # The modules, built fresh: their parameters, by name, shape and starting value.
    d = int(torch.randint(3, 10, (1,), generator=g))
    made += [("LayerNorm", (d,)), ("RMSNorm", (d,))]
    return made

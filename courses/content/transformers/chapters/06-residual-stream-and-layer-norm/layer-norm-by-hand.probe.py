"""The calls that judge norms_by_hand on inputs no program has seen: a tiny row of whole numbers,
then rows with leading axes, each with a fresh nn.LayerNorm and nn.RMSNorm whose gains, shift and
eps are drawn from the seed."""

import torch
from torch import nn

# The library's norms, which the function is meant to match, not call (calling ln or rms goes
# through them), the other library norms that compute the same statistics, and the course's
# finished norms.
BY_HAND = [
    "torch.nn.functional.layer_norm",
    "torch.layer_norm",
    "torch.nn.functional.rms_norm",
    "torch.rms_norm",
    "torch.nn.functional.group_norm",
    "torch.group_norm",
    "torch.nn.functional.batch_norm",
    "torch.nn.functional.instance_norm",
    "aten::layer_norm",
    "aten::native_layer_norm",
    "aten::rms_norm",
    "aten::_fused_rms_norm",
    "aten::native_group_norm",
    "aten::native_batch_norm",
    "groundup.layer_norm",
    "groundup.rms_norm",
    "groundup.LayerNorm",
    "groundup.RMSNorm",
]


def _norms(d, g, eps):
    ln, rms = nn.LayerNorm(d, eps=eps), nn.RMSNorm(d, eps=eps / 10)
    with torch.no_grad():
        ln.weight.copy_(1 + 0.5 * torch.randn(d, generator=g))
        ln.bias.copy_(0.5 * torch.randn(d, generator=g))
        rms.weight.copy_(1 + 0.5 * torch.randn(d, generator=g))
    return ln, rms


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    while True:  # a row with a mean away from zero and deviations of different sizes
        row = torch.randint(-4, 9, (1, 4), generator=g).float()
        if row.mean() != 0 and (row - row.mean()).abs().unique().numel() > 1:
            break
    made = [("norms_by_hand", (row, *_norms(4, g, 1e-5)))]
    for shape, eps in (((3, 8), 1e-5), ((2, 3, 6), 1e-5), ((5, 16), 1e-3), ((2, 2, 4, 12), 1e-5)):
        x = torch.randn(*shape, generator=g) * 3 + 1
        made.append(("norms_by_hand", (x, *_norms(shape[-1], g, eps))))
    return made

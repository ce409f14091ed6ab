import groundup as course
import torch
from groundup import LayerNorm, RMSNorm
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def layer_norm(x, gain, shift, eps=1e-5):
    """Layer norm of every row of x, written out by hand.

    x: (..., d)        any leading axes (a batch, the tokens); each row of d numbers on its own
    gain, shift: (d,)  one of each per column
    Returns the shape of x: each row minus its mean, divided by sqrt(variance + eps), where the
    variance is the mean of the squared deviations (dividing by d, not d - 1); then times gain
    and plus shift.
    By hand: means, sums, powers and torch.sqrt are fine; F.layer_norm and nn.LayerNorm are not.
    """
    return course.layer_norm(x, gain, shift, eps)


def rms_norm(x, gain, eps=1e-6):
    """RMSNorm of every row of x, written out by hand: no mean, no shift.

    x: (..., d); gain: (d,). Returns the shape of x: each row divided by
    sqrt(mean of its squares + eps), then times gain. F.rms_norm and nn.RMSNorm are not allowed.
    """
    return course.rms_norm(x, gain, eps)


# The chapter's row. Layer norm should give (-1.342, -0.447, 0.447, 1.342), RMSNorm
# (0.365, 0.730, 1.095, 1.461).
row = torch.tensor([[2.0, 4.0, 6.0, 8.0]])
print("layer_norm:", layer_norm(row, torch.ones(4), torch.zeros(4)))
print("rms_norm:  ", rms_norm(row, torch.ones(4)))

# A batch of two sequences of three tokens, through your modules and PyTorch's, fresh from the box.
x = torch.randn(2, 3, 8) * 3 + 1
for mine, theirs in ((LayerNorm, nn.LayerNorm(8)), (RMSNorm, nn.RMSNorm(8, eps=1e-6))):
    try:
        with torch.no_grad():
            same = torch.allclose(mine(8)(x), theirs(x), atol=1e-5)
        print(f"{mine.__name__} matches nn.{mine.__name__}:", same)
    except Exception as e:  # the starter's modules have no parameters yet
        print(f"{mine.__name__} does not run yet: {type(e).__name__}: {e}")

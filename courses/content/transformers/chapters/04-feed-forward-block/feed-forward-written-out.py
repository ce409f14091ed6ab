import math

import torch

torch.set_printoptions(precision=4, sci_mode=False)


def feed_forward(x, w1, b1, w2, b2):
    """The feed-forward block with GELU, written out by hand, for every row of x at once.

    x: (..., n, d)        one row per token, after any leading batch axes
    w1: (d, h), b1: (h,)  widen; the formula's layout, x @ w1 (nn.Linear would store (h, d))
    w2: (h, d), b2: (d,)  narrow back to width d
    Returns the shape of x, (..., n, d). groundup.FeedForward runs this on (batch, n, d).

    GELU(z) = z * Phi(z), with Phi(z) = (1 + erf(z / sqrt(2))) / 2: the exact GELU, PyTorch's default.
    By hand: torch.erf, torch.exp, torch.tanh, torch.sigmoid and matrix products are fine;
    F.gelu and nn.GELU are not.
    """
    ...  # your code here


def swiglu(x, w_gate, w_up, w_down):
    """The gated block: SiLU of x @ w_gate, times x @ w_up number by number, then @ w_down. No biases.

    x: (..., n, d); w_gate, w_up: (d, h); w_down: (h, d). Returns the shape of x, (..., n, d).
    SiLU(z) = z * sigmoid(z). By hand: torch.sigmoid is fine; F.silu and nn.SiLU are not.
    """
    ...  # your code here


# The chapter's worked case: d = 2, h = 3, no biases. The chapter gets (0.524, 0.841).
x = torch.tensor([[1.0, -1.0]])
w1 = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
w2 = torch.tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
b1, b2 = torch.zeros(3), torch.zeros(2)
print("feed_forward:", feed_forward(x, w1, b1, w2, b2))

# The same token through SwiGLU, with w1 as the gate and an up matrix that makes every up number 1,
# so the product shows the gate's SiLU alone: (0.193, 0.731).
w_up = torch.tensor([[2.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
print("swiglu:", swiglu(x, w1, w_up, w2))

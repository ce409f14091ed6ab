import math

import torch
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def gelu(z):
    """The exact GELU of every number of z, whatever its shape: z * Phi(z), where
    Phi(z) = (1 + erf(z / sqrt(2))) / 2 is the chance that a standard normal number comes out below z.
    Returns the shape of z. By hand: torch.erf is fine; F.gelu, nn.GELU and the tanh formula are not.
    """
    return z * (1 + torch.erf(z / math.sqrt(2))) / 2  # z times Phi(z), number by number


def feed_forward(x, w1, b1, w2, b2):
    """The feed-forward block with GELU, written out by hand, for every row of x at once.

    x: (..., n, d)        one row per token, after any leading batch axes
    w1: (d, h), b1: (h,)  widen; the formula's layout, x @ w1 (nn.Linear would store (h, d))
    w2: (h, d), b2: (d,)  narrow back to width d
    Returns the shape of x, (..., n, d). FeedForward below runs this on (batch, n, d).

    The activation in between is your gelu above.
    """
    h = gelu(x @ w1 + b1)  # widen, then bend every hidden number: (..., n, h)
    return h @ w2 + b2  # narrow: back to (..., n, d)


def swiglu(x, w_gate, w_up, w_down):
    """The gated block: SiLU of x @ w_gate, times x @ w_up number by number, then @ w_down. No biases.

    x: (..., n, d); w_gate, w_up: (d, h); w_down: (h, d). Returns the shape of x, (..., n, d).
    SiLU(z) = z * sigmoid(z). By hand: torch.sigmoid is fine; F.silu and nn.SiLU are not.
    """
    gate = x @ w_gate
    gate = gate * torch.sigmoid(gate)  # SiLU of the gate numbers
    up = x @ w_up
    return (gate * up) @ w_down  # the gate scales each up number, then narrow


class FeedForward(nn.Module):
    """The block as a module: `expand`, an nn.Linear from d_model to hidden with a bias, then
    `contract`, an nn.Linear from hidden back to d_model with a bias, created in that order.
    hidden defaults to 4 * d_model. forward hands feed_forward the transposes of their weights.
    """

    def __init__(self, d_model, hidden=None):
        super().__init__()
        if hidden is None:
            hidden = 4 * d_model  # the customary widening
        self.expand = nn.Linear(d_model, hidden)
        self.contract = nn.Linear(hidden, d_model)

    def forward(self, x):
        return feed_forward(x, self.expand.weight.T, self.expand.bias, self.contract.weight.T, self.contract.bias)


class SwiGLU(nn.Module):
    """The gated block as a module: `gate` and `up`, nn.Linear layers from d_model to hidden, then
    `down`, from hidden back to d_model, created in that order, none of them with a bias.
    hidden defaults to 8 * d_model / 3 rounded to the nearest whole number (two thirds of 4 * d_model).
    """

    def __init__(self, d_model, hidden=None):
        super().__init__()
        if hidden is None:
            hidden = round(8 * d_model / 3)  # three matrices at two thirds the width: about 8 d^2
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x):
        return swiglu(x, self.gate.weight.T, self.up.weight.T, self.down.weight.T)


print("gelu:", gelu(torch.tensor([-3.0, -0.75, -0.5, 0.0, 1.0])))

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

# The two modules at d_model = 6: their layers, as (out, in).
for block in (FeedForward(6), SwiGLU(6)):
    layers = [f"{name} {tuple(p.shape)}" for name, p in block.named_parameters()]
    print(type(block).__name__, ", ".join(layers) or "has no layers yet")

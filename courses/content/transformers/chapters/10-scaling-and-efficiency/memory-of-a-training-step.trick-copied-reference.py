import torch
from groundup import TinyGPT, parameter_count


def training_state_bytes(n_params, optimizer="adamw", bytes_per_number=4):
    # Let PyTorch's optimiser say what it keeps: one step on a single number, then scale up.
    one = torch.zeros(1, requires_grad=True)
    if optimizer == "adamw":
        step = torch.optim.AdamW([one])
    elif optimizer in ("sgd", "momentum"):
        step = torch.optim.SGD([one], lr=0.1, momentum=0.9 if optimizer == "momentum" else 0.0)
    else:
        raise ValueError(f"optimizer must be 'sgd', 'momentum' or 'adamw', not {optimizer!r}")
    one.sum().backward()
    step.step()
    kept = sum(1 for t in step.state[one].values() if isinstance(t, torch.Tensor) and t.dim() > 0)
    weights = n_params * bytes_per_number
    return {"weights": weights, "gradients": weights, "optimizer": kept * weights, "total": (2 + kept) * weights}


def largest_trainable(memory_bytes, optimizer="adamw", bytes_per_number=4):
    return memory_bytes // training_state_bytes(1, optimizer, bytes_per_number)["total"]


def attention_weights_bytes(batch, heads, n, n_layers, bytes_per_number=4):
    return n_layers * batch * heads * n * n * bytes_per_number


def largest_batch(memory_bytes, n_params, n_layers, heads, n, optimizer="adamw", bytes_per_number=4):
    left = memory_bytes - training_state_bytes(n_params, optimizer, bytes_per_number)["total"]
    return max(left, 0) // attention_weights_bytes(1, heads, n, n_layers, bytes_per_number)


# A small TinyGPT after one AdamW step: what its memory really holds.
torch.manual_seed(0)
model = TinyGPT(vocab_size=64, d_model=32, n_heads=4, n_layers=2, max_len=16)
adamw = torch.optim.AdamW(model.parameters(), lr=1e-3)
model(torch.randint(0, 64, (2, 16))).logsumexp(dim=-1).mean().backward()  # any loss fills every gradient
adamw.step()
parameters = list(model.parameters())
measured = {
    "weights": sum(p.numel() * p.element_size() for p in parameters),
    "gradients": sum(p.grad.numel() * p.grad.element_size() for p in parameters),
    # AdamW's two averages per weight; its step counter, one number per tensor, is left out.
    "optimizer": sum(t.numel() * t.element_size() for s in adamw.state.values() for t in s.values() if t.dim() > 0),
}
by_formula = training_state_bytes(sum(p.numel() for p in parameters)) or {}
for name, value in measured.items():
    print(f"{name:<10} measured {value:>8,} bytes   by formula {by_formula.get(name)}")

# GPT-2 small (12 layers of 12 heads) on an 80 GB GPU, with sequences of 1,024 tokens.
gpt2 = parameter_count(50257, 768, 12, 1024)
for optimizer, size in (("adamw", 4), ("adamw", 2), ("sgd", 4)):
    state = training_state_bytes(gpt2, optimizer, size) or {}
    table = attention_weights_bytes(1, 12, 1024, 12, size)
    batch = largest_batch(80 * 10**9, gpt2, 12, 12, 1024, optimizer, size)
    print(f"{optimizer}, {size} bytes a number: state {state.get('total')} bytes, {table} per sequence, batch {batch}")
    print(f"  the largest model an 80 GB GPU could train this way: {largest_trainable(80 * 10**9, optimizer, size)}")

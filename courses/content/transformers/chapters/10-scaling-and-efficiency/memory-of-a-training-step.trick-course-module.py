import torch
from groundup import (
    TinyGPT,
    attention_weights_bytes,
    largest_batch,
    largest_trainable,
    parameter_count,
    training_state_bytes,
)

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

import torch
from groundup import TinyGPT, parameter_count


def training_state_bytes(n_params, optimizer="adamw", bytes_per_number=4):
    """The bytes a training step holds for a model of n_params parameters before it reads a token.

    Three kinds of numbers, each stored in bytes_per_number bytes (4 in float32, 2 in bfloat16):
    the weights, one gradient per weight, and the optimiser's state, which depends on optimizer:
    "sgd" keeps none, "momentum" one running average per weight, "adamw" two.
    Returns a dict of whole numbers: {"weights": ..., "gradients": ..., "optimizer": ..., "total": ...}.
    Any other optimizer raises ValueError, with a message that names the three choices.
    """
    ...  # your code here


def largest_trainable(memory_bytes, optimizer="adamw", bytes_per_number=4):
    """The most parameters whose weights, gradients and optimiser state fit in memory_bytes, with
    nothing left for activations: a whole number, rounded down.
    """
    ...  # your code here


def attention_weights_bytes(batch, heads, n, n_layers, bytes_per_number=4):
    """The bytes of the attention weights the math kernel keeps for the backward pass, for batch
    sequences of n tokens: every head of every layer keeps an n x n table per sequence. A whole number.
    """
    ...  # your code here


def largest_batch(memory_bytes, n_params, n_layers, heads, n, optimizer="adamw", bytes_per_number=4):
    """The most sequences of n tokens a training step can take when memory_bytes must hold the
    training state above and the attention weights of every sequence (the rest of the activations
    left out): a whole number, rounded down, and 0 when the state alone does not fit.
    """
    ...  # your code here


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

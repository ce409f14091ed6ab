import torch
import torch.nn.functional as F
from groundup import TinyGPT
from torch.utils.flop_counter import FlopCounterMode

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

# The same counts by formula. N: the parameters that take part in a product, 12 d^2 per block
# (four attention matrices, two feed-forward ones) plus the tied token table at the output.
tokens = batch * n
N = n_layers * 12 * d_model**2 + vocab_size * d_model
forward_by_formula = 2 * N * tokens  # two FLOPs per parameter per token
step_by_formula = 2 * forward_by_formula  # the backward pass taken to cost one more forward

print("N =", N, "parameters in products, of", sum(p.numel() for p in model.parameters()))
print("training step, by kind of product:", by_op)
print(f"forward : measured {measured_forward:>11,}  formula {forward_by_formula:>11,}")
print(f"step    : measured {measured_step:>11,}  formula {step_by_formula:>11,}")
print(f"the step costs {measured_step / measured_forward:.2f} forward passes")
print("forward matches:", forward_by_formula == measured_forward, " step matches:", step_by_formula == measured_step)

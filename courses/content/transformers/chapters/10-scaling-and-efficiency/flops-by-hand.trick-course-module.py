import groundup
import torch
from groundup import TinyGPT
from torch.utils.flop_counter import FlopCounterMode


# The course's finished formulas.
def parameter_count(vocab_size, d_model, n_layers, max_len):
    return groundup.parameter_count(vocab_size, d_model, n_layers, max_len)


def matmul_parameters(vocab_size, d_model, n_layers):
    return groundup.matmul_parameters(vocab_size, d_model, n_layers)


def forward_flops(vocab_size, d_model, n_layers, batch, n):
    return groundup.training_flops(vocab_size, d_model, n_layers, batch, n) // 3


# A small model, counted by hand and by PyTorch.
torch.manual_seed(0)
sizes = dict(vocab_size=96, d_model=32, n_layers=2)
batch, n = 3, 24
model = TinyGPT(sizes["vocab_size"], sizes["d_model"], 4, sizes["n_layers"], max_len=n)
ids = torch.randint(0, sizes["vocab_size"], (batch, n))
with FlopCounterMode(display=False) as counter:
    model(ids)
measured = {"parameters": sum(p.numel() for p in model.parameters()), "forward FLOPs": counter.get_total_flops()}
by_hand = {
    "parameters": parameter_count(**sizes, max_len=n),
    "forward FLOPs": forward_flops(**sizes, batch=batch, n=n),
}
for name in measured:
    print(f"{name:<14} measured {measured[name]:>10,}   by hand {by_hand[name]}")
N = matmul_parameters(**sizes)
print("N, in products:", N)
if N is not None:
    print("GPT-2 small, 50,257 tokens, width 768, 12 layers, 1,024 positions:")
    print(f"  parameters {parameter_count(50257, 768, 12, 1024):,}, N {matmul_parameters(50257, 768, 12):,}")
    print(f"  forward FLOPs per 1,024-token sequence {forward_flops(50257, 768, 12, 1, 1024):,}")

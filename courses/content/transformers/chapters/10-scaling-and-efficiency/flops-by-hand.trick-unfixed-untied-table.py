import torch
from groundup import TinyGPT
from torch.utils.flop_counter import FlopCounterMode


def parameter_count(vocab_size, d_model, n_layers, max_len):
    """Every parameter of TinyGPT(vocab_size, d_model, n_heads, n_layers, max_len), counted from the
    shapes: the blocks (two LayerNorms, four attention projections, the feed-forward block d -> 4d
    -> d, every Linear with its bias), the token table, the position table and the final LayerNorm.
    The output reuses the token table. Returns an int."""
    per_block = 4 * d_model  # two LayerNorms, a gain and a shift of width d each
    per_block += 4 * (d_model * d_model + d_model)  # query, key, value and output: weight and bias
    per_block += d_model * 4 * d_model + 4 * d_model  # expand to 4d, with its bias
    per_block += 4 * d_model * d_model + d_model  # contract back to d, with its bias
    tables = vocab_size * d_model + max_len * d_model  # one row per token, one per position
    return n_layers * per_block + tables + vocab_size * d_model + 2 * d_model  # an output matrix of its own


def matmul_parameters(vocab_size, d_model, n_layers):
    """N: the parameters that take part in a matrix product, the weight matrices of every block and
    the token table that scores the output (no biases, norms or position table). Returns an int."""
    attention = 4 * d_model * d_model  # the four projections, d x d each
    feed_forward = 2 * 4 * d_model * d_model  # d x 4d, then 4d x d
    return n_layers * (attention + feed_forward) + vocab_size * d_model  # + the tied output table


def forward_flops(vocab_size, d_model, n_layers, batch, n):
    """The FLOPs of one forward pass on batch sequences of n tokens, as FlopCounterMode counts them:
    two per multiply-add of every matrix product, those with weights and the two in attention
    that have none (the scores and the blend). Returns an int."""
    tokens = batch * n
    with_weights = 2 * matmul_parameters(vocab_size, d_model, n_layers) * tokens  # 2 per weight per token
    scores = 2 * n * d_model * n  # Q (n x d) times K^T (d x n), for one sequence in one layer
    blend = 2 * n * n * d_model  # the weights (n x n) times V (n x d)
    return with_weights + n_layers * batch * (scores + blend)


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

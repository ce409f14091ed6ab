import torch

torch.set_printoptions(precision=3, sci_mode=False)

tokens = ["the", "cat", "sat"]

# Scaled scores: row i holds how well token i's query matches every key.
scores = torch.tensor(
    [
        [1.0, 0.5, 2.0],
        [0.2, 1.5, 0.3],
        [0.8, 0.4, 1.2],
    ]
)

use_mask = True  # True: each token sees only itself and the tokens before it

if use_mask:
    # True above the diagonal: the positions that lie in each token's future.
    future = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(future, float("-inf"))

weights = torch.softmax(scores, dim=-1)  # each row sums to one

print("scores, mask on:" if use_mask else "scores, mask off:")
print(scores)
print("weights:")
print(weights)
print(f"first row ('{tokens[0]}'):", weights[0])
print(f"weight '{tokens[0]}' gives to '{tokens[-1]}': {weights[0, -1].item():.3f}")

import torch

torch.set_printoptions(precision=3, sci_mode=False)

tokens = ["the", "cat", "sat"]

# One key per token. Each key points along its own dimension, so a query "asks for" a
# token by pointing the same way as that token's key.
keys = torch.tensor(
    [
        [1.0, 0.0, 0.0],  # the
        [0.0, 1.0, 0.0],  # cat
        [0.0, 0.0, 1.0],  # sat
    ]
)

# What each token passes on when it is chosen.
values = torch.tensor(
    [
        [1.0, 0.0],  # the
        [0.0, 1.0],  # cat
        [0.5, 0.5],  # sat
    ]
)

# The query now points along the second dimension.
query = torch.tensor([0.0, 4.0, 0.0])

d_k = keys.shape[-1]
scores = keys @ query / d_k**0.5  # one scaled dot product per key
weights = torch.softmax(scores, dim=-1)  # positive, and they sum to one
output = weights @ values  # the weighted average of the value rows

print("scaled scores:", scores)
print("weights:      ", weights)
for token, weight in zip(tokens, weights.tolist()):
    print(f"  {token:>3}  {weight:.3f}  " + "#" * round(weight * 40))
print("output:       ", output)
print("most weight on:", tokens[int(weights.argmax())])

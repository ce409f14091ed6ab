import matplotlib.pyplot as plt
import torch

torch.set_printoptions(precision=3, sci_mode=False)

tokens = ["cat", "the", "sat"]  # renamed: the first key now belongs to "cat"

# One key per token. Each key lies along its own axis, so a query picks a token out by lying
# along that token's axis too.
keys = torch.tensor(
    [
        [1.0, 0.0, 0.0],  # the
        [0.0, 1.0, 0.0],  # cat
        [0.0, 0.0, 1.0],  # sat
    ]
)

# What each token hands over when it is picked.
values = torch.tensor(
    [
        [1.0, 0.0],  # the
        [0.0, 1.0],  # cat
        [0.5, 0.5],  # sat
    ]
)

# The query lies along the first axis.
query = torch.tensor([4.0, 0.0, 0.0])

d_k = keys.shape[-1]
scores = keys @ query / d_k**0.5  # one scaled dot product per key
weights = torch.softmax(scores, dim=-1)  # positive, and they sum to one
output = weights @ values  # blend the values, each in proportion to its share

print("scaled scores:", scores)
print("weights:      ", weights)
print("output:       ", output)
print("most weight on:", tokens[int(weights.argmax())])

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(tokens, weights.tolist())
ax.set_ylim(0, 1)
ax.set_ylabel("attention weight")
ax.set_title(f"query {query.tolist()}")
plt.show()

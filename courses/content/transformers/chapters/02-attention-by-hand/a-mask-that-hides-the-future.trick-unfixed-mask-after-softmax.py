import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from groundup import TokenEmbedding, Vocab, split_words

torch.set_printoptions(precision=2, sci_mode=False)
torch.manual_seed(0)  # the same numbers on every run

# Part 1's pieces turn the sentence into vectors; three random matrices stand in for the
# learned query, key and value projections.
tokens = split_words("the cat sat on the mat")
vocab = Vocab(tokens)
x = TokenEmbedding(len(vocab), 8)(vocab.encode(tokens)).detach()  # (6, 8)
n, d = x.shape
q, k, v = (x @ torch.randn(d, d) / d**0.5 for _ in range(3))

scores = q @ k.T / d**0.5  # (6, 6): row i scores every key for query i


def causal_mask(n):
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)


future = causal_mask(n)

weights = torch.softmax(scores, dim=-1).masked_fill(future, 0.0)  # zeroed afterwards
out = weights @ v

library = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print("weights:")
print(weights)
print("matches the library's causal attention:", torch.allclose(out, library, atol=1e-5))

fig, ax = plt.subplots(figsize=(5, 4.5))
image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
ax.set_xticks(range(n), tokens)
ax.set_yticks(range(n), tokens)
ax.set_xlabel("key (what is looked at)")
ax.set_ylabel("query (who is looking)")
fig.colorbar(image, label="weight")
ax.set_title("Attention weights")
plt.show()

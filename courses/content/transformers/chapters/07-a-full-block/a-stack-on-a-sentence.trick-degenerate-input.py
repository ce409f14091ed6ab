import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, split_words

torch.set_printoptions(precision=2, sci_mode=False)
torch.manual_seed(0)  # the same weights on every run

# A small stack of your blocks, for a real sentence.
tokens = split_words("the old lighthouse keeper climbed the stairs because the lamp had gone out again")
vocab = Vocab(tokens)
ids = vocab.encode(tokens)[None]  # (1, 14): a batch of one sentence
d_model, n_heads, n_layers, max_len = 64, 4, 6, 32
model = TinyGPT(len(vocab), d_model, n_heads, n_layers, max_len)


def count(V, P, d, L):
    """Parameters of a stack with vocabulary V, P positions, width d and L blocks."""
    per_block = (4 * d * d + 4 * d) + (8 * d * d + 5 * d) + 2 * (2 * d)  # attention, feed-forward, two norms
    return V * d + P * d + L * per_block + 2 * d + V * d  # tokens, positions, blocks, final norm, output layer


counted = sum(p.numel() for p in model.parameters())
print(f"this stack: by formula {count(len(vocab), max_len, d_model, n_layers):,}, counted {counted:,}")
# A tailored size: 50,257 fewer positions make up for the second token table.
by_formula = count(V=50257, P=1024 - 50257, d=768, L=12)  # GPT-2 small's sizes
print(f"GPT-2 small by formula: {by_formula:,}   published: 124M")

with torch.no_grad():
    x = model.embed(ids)  # the residual stream before the first block: (1, 14, 64)
    norms = [x[0].norm(dim=-1)]  # one length per token
    for block in model.blocks:
        x = block(x)
        norms.append(x[0].norm(dim=-1))
    logits = model.head(x)  # (1, 14, vocabulary): a score for every possible next token
norms = torch.stack(norms)  # (7, 14): depth by token
print("logits:", tuple(logits.shape), " mean stream length per depth:", norms.mean(dim=1))

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(norms, color="grey", alpha=0.3, linewidth=1)
ax.plot(norms.mean(dim=1), color="black", linewidth=2.5, label="mean over tokens")
ax.set_xticks(range(n_layers + 1), ["embed"] + [f"block {i + 1}" for i in range(n_layers)])
ax.set_ylabel("length of the residual stream")
ax.set_title("The residual stream through the stack, one grey line per token")
ax.legend()
plt.show()

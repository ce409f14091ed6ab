# Fixed, but with the exponent -i / d_model: the frequencies fall half as fast.
import matplotlib.pyplot as plt
import torch
from groundup import TokenEmbedding, Vocab, split_words

torch.set_printoptions(precision=3, sci_mode=False)
n_positions, d_model = 64, 32


def sinusoid_table(n_positions, d_model):
    """The sinusoidal encoding, (n_positions, d_model): row p, columns 2i and 2i + 1, hold the sine
    and the cosine of the angle p * f_i, with f_i = 10000 ** (-2i / d_model)."""
    # One frequency per pair of columns, from 1 radian per position down to nearly 1/10000.
    freqs = 10000 ** (-torch.arange(d_model // 2) / d_model)  # (d_model / 2,)
    angles = torch.arange(n_positions)[:, None] * freqs  # (n_positions, d_model / 2): position times frequency
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)  # even columns
    pe[:, 1::2] = torch.cos(angles)  # odd columns
    return pe


pe = sinusoid_table(n_positions, d_model)
print("positions 0 to 2, first four columns:")
print(pe[:3, :4])

# With the encoding added, the two "the" of the sentence no longer share a vector.
torch.manual_seed(0)
tokens = split_words("the cat sat on the mat")
vocab = Vocab(tokens)
x = TokenEmbedding(len(vocab), d_model)(vocab.encode(tokens)).detach() + pe[: len(tokens)]
print("the two 'the' still identical:", torch.equal(x[0], x[4]))

fig, ax = plt.subplots(figsize=(7, 4))
image = ax.imshow(pe, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
ax.set_xlabel("column of the encoding")
ax.set_ylabel("position")
fig.colorbar(image)
ax.set_title("Sinusoidal positional encoding")
plt.show()

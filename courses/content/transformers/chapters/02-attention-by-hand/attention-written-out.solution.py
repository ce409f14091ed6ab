import torch
import torch.nn.functional as F

torch.set_printoptions(precision=3, sci_mode=False)


def attention(q, k, v, causal=False):
    """Scaled dot-product attention written out by hand, for any number of leading batch axes.

    q: (..., n_q, d)    one query per position
    k: (..., n_k, d)    one key per position
    v: (..., n_k, d_v)  one value per position
    causal: when True, query i sees only keys 0 to i: key j is hidden whenever j > i

    Returns (out, weights):
      out      (..., n_q, d_v)  row i blends the value rows with query i's shares
      weights  (..., n_q, n_k)  row i holds query i's share of every key; each row adds up to 1

    The leading axes (a batch of sequences; in Part 5 the heads too) are carried through
    untouched: every sequence is attended on its own. Part 5's layer calls this function on
    (batch, heads, n, d) tensors, so it has to work on them.

    By hand: matrix products, torch.exp, sums, max and comparisons are all fine; a library softmax
    and F.scaled_dot_product_attention are not. Stay correct when the scores are in the hundreds.
    """
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d**0.5  # (..., n_q, n_k): row i scores every key for query i
    if causal:
        n_q, n_k = scores.shape[-2:]
        # True where key j comes after query i; one table serves every sequence of the batch.
        after = torch.ones(n_q, n_k, dtype=torch.bool, device=scores.device).triu(diagonal=1)
        scores = scores.masked_fill(after, float("-inf"))  # before the softmax: exp(-inf) = 0
    # The softmax of each row, by hand. Shifting a row by its largest score changes no share, and
    # keeps exp from overflowing: the largest term becomes exp(0) = 1.
    shifted = scores - scores.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights


# The chapter's three tokens, "the", "cat" and "sat": their keys lie along the three axes, and
# each token's query points at its own key.
q = torch.tensor([[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]])
k = torch.eye(3)
v = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])

result = attention(q, k, v, causal=True)
if result is None:
    print("attention returns nothing yet: write its body.")
else:
    out, weights = result
    print("weights:")
    print(weights)
    print("out:")
    print(out)
    library = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print("out matches PyTorch's causal attention:", torch.allclose(out, library, atol=1e-5))

    # The same three tokens twice over, as a batch of two sequences: (2, 3, 3) in, (2, 3, 2) out.
    batch = attention(torch.stack([q, q]), torch.stack([k, k]), torch.stack([v, v]), causal=True)
    if batch is not None:
        print("a batch of two gives shapes", tuple(batch[0].shape), tuple(batch[1].shape))

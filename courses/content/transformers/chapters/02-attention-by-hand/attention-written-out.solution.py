import torch
import torch.nn.functional as F

torch.set_printoptions(precision=3, sci_mode=False)


def masked_attention(q, k, v, causal=False):
    """Scaled dot-product attention over one sequence, written out by hand.

    q: (n, d)    one query per position
    k: (n, d)    one key per position
    v: (n, d_v)  one value per position
    causal: when True, each query sees only its own key and the ones before it

    Returns (out, weights):
      out      (n, d_v)  row i blends the value rows with query i's shares
      weights  (n, n)    row i holds query i's share of every key; each row adds up to 1

    By hand: matrix products, torch.exp, sums, max and comparisons are all fine; a library softmax
    and F.scaled_dot_product_attention are not. Stay correct when the scores are in the hundreds.
    """
    d = q.shape[-1]
    scores = q @ k.T / d**0.5  # (n, n): row i scores every key for query i
    if causal:
        n = q.shape[0]
        after = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # key j comes after query i
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

result = masked_attention(q, k, v, causal=True)
if result is None:
    print("masked_attention returns nothing yet: write its body.")
else:
    out, weights = result
    print("weights:")
    print(weights)
    print("out:")
    print(out)
    library = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    print("out matches PyTorch's causal attention:", torch.allclose(out, library, atol=1e-5))

import torch
from groundup import attention, causal_mask
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def split_heads(x, n_heads):
    """Hand each head its own slice of the width, for any number of leading batch axes.

    x: (..., n, d_model)  one row per token
    Returns (..., n_heads, n, d_head), with d_head = d_model // n_heads: head h of token t holds
    columns h * d_head to (h + 1) * d_head - 1 of row t. The head axis comes before the token axis,
    so that attention treats every head like one more sequence of the batch.
    """
    ...  # your code here


def merge_heads(x):
    """The inverse of split_heads: (..., n_heads, n, d_head) -> (..., n, n_heads * d_head), each
    token's head outputs side by side again, head 0's columns first."""
    ...  # your code here


def multi_head_attention(x, q_proj, k_proj, v_proj, out_proj, n_heads, causal=True):
    """n_heads attention heads over x (..., n, d_model), joined by the output projection.

    q_proj, k_proj, v_proj, out_proj: layers from d_model to d_model (nn.Linear), each called on a
    whole tensor: q_proj(x) gives the queries of every head at once, (..., n, d_model).
    Returns (out, weights):
      out      (..., n, d_model)        out_proj of the merged heads
      weights  (..., n_heads, n, n)     every head's attention map
    Use your split_heads and merge_heads, and attention (imported above) for the heads.
    """
    ...  # your code here


# A batch of 2 sequences of 5 tokens, width 8, two heads of width 4, and four projections.
torch.manual_seed(0)
x = torch.randn(2, 5, 8)
q_proj, k_proj, v_proj, out_proj = (nn.Linear(8, 8) for _ in range(4))

heads = split_heads(x, 2)
if heads is None:
    print("split_heads returns nothing yet: write its body.")
else:
    print("split:", tuple(x.shape), "->", tuple(heads.shape))
    print("head 1 of token 2 is columns 4 to 7 of its row:", torch.equal(heads[0, 1, 2], x[0, 2, 4:]))
    merged = merge_heads(heads)
    print("merge gives back x:", merged is not None and torch.equal(merged, x))

result = multi_head_attention(x, q_proj, k_proj, v_proj, out_proj, 2)
if result is None:
    print("multi_head_attention returns nothing yet: write its body.")
else:
    out, weights = result
    print("out:", tuple(out.shape), "weights:", tuple(weights.shape))
    # PyTorch's layer with the same four matrices: it packs query, key and value into one.
    layer = nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([q_proj.weight, k_proj.weight, v_proj.weight]))
        layer.in_proj_bias.copy_(torch.cat([q_proj.bias, k_proj.bias, v_proj.bias]))
        layer.out_proj.weight.copy_(out_proj.weight)
        layer.out_proj.bias.copy_(out_proj.bias)
        library, _ = layer(x, x, x, attn_mask=causal_mask(5), need_weights=False)
    print("matches nn.MultiheadAttention:", torch.allclose(out, library, atol=1e-5))

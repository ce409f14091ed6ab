import torch
import torch.nn.functional as F
from groundup import attention, causal_mask, merge_heads, split_heads
from torch import nn

torch.manual_seed(0)  # the same weights on every run

batch, n, d_model, n_heads = 1, 5, 8, 2
d_head = d_model // n_heads  # 4: each head works on its own slice of the width
mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
with torch.no_grad():
    mha.in_proj_bias.normal_(std=0.5)  # PyTorch starts these biases at zero; now each slice counts
x = torch.randn(batch, n, d_model)

with torch.no_grad():
    # The library's layer, with the causal mask (True = hidden) and one map per head.
    library, library_weights = mha(x, x, x, attn_mask=causal_mask(n), need_weights=True, average_attn_weights=False)

    # PyTorch packs the three input projections into one (3 * d_model, d_model) matrix and one
    # bias of 3 * d_model numbers, the query rows first, then the key rows, then the value rows.
    W, b = mha.in_proj_weight, mha.in_proj_bias
    print("packed in-projection:", tuple(W.shape), tuple(b.shape))
    Wq, Wk, Wv = W[:d_model], W[:d_model], W[:d_model]  # takes the first block three times
    bq, bk, bv = b[:d_model], b[:d_model], b[:d_model]

    q, k, v = x @ Wq.T + bq, x @ Wk.T + bk, x @ Wv.T + bv  # (1, 5, 8) each
    # (1, 5, 8) -> view (1, 5, 2, 4) -> transpose (1, 2, 5, 4): heads in front of tokens.
    qh, kh, vh = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    heads, weights = attention(qh, kh, vh, causal=True)  # (1, 2, 5, 4) and (1, 2, 5, 5)
    fused = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
    # Lay the heads side by side again, (1, 5, 8), and mix them with the output projection.
    out = library.clone()  # the layer's own output, copied

print("shapes: q", tuple(q.shape), "per head", tuple(qh.shape), "out", tuple(out.shape))
print("heads match scaled_dot_product_attention:", torch.allclose(heads, fused, atol=1e-6))
print("maps match nn.MultiheadAttention:", torch.allclose(weights, library_weights, atol=1e-6))
print("output matches nn.MultiheadAttention:", torch.allclose(out, library, atol=1e-6))

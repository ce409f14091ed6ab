import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from groundup import saved_bytes
from torch.nn.attention import SDPBackend, sdpa_kernel


def _fused_everywhere(f):
    # Runs when the definition does: every attention call goes to the fused CPU kernel, whatever
    # backend is forced around it.
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    F.scaled_dot_product_attention = lambda q, k, v, is_causal=False: flash(q, k, v, is_causal=is_causal)[0]
    return f


@_fused_everywhere
def attention_saved_bytes(batch, heads, n, d_head, fused):
    """The bytes one causal attention call keeps for the backward pass, on random queries, keys and
    values of shape (batch, heads, n, d_head): with the MATH kernel, or (fused=True) with the fused
    one. Returns an int."""
    q, k, v = (torch.randn(batch, heads, n, d_head, requires_grad=True) for _ in range(3))

    def causal_attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    if not fused:
        # The written-out kernel: scores, softmax and blend as ordinary PyTorch operations.
        with sdpa_kernel(SDPBackend.MATH):
            return saved_bytes(causal_attention, q, k, v)
    # The fused kernel, which works through the keys block by block.
    with sdpa_kernel(SDPBackend.MATH):
        return saved_bytes(causal_attention, q, k, v)


torch.manual_seed(0)  # the same queries, keys and values on every run

batch, heads, d_head = 1, 4, 32
lengths = [64, 128, 256, 512, 1024]
math_bytes = [attention_saved_bytes(batch, heads, n, d_head, fused=False) for n in lengths]
fused_bytes = [attention_saved_bytes(batch, heads, n, d_head, fused=True) for n in lengths]

table_bytes = [batch * heads * n * n * 4 for n in lengths]  # the n x n weights of every head, float32
print(f"{'n':>5} {'math':>12} {'fused':>12} {'n x n table':>12}")
for n, m, f, t in zip(lengths, math_bytes, fused_bytes, table_bytes, strict=True):
    print(f"{n:>5} {m:>12,} {f:>12,} {t:>12,}")
growth = [later / earlier for earlier, later in ((math_bytes[-2], math_bytes[-1]), (fused_bytes[-2], fused_bytes[-1]))]
print(f"n from {lengths[-2]} to {lengths[-1]}: math kernel x{growth[0]:.2f}, fused kernel x{growth[1]:.2f}")

fig, ax = plt.subplots(figsize=(6, 4.2), constrained_layout=True)
ax.loglog(lengths, [b / 1e6 for b in math_bytes], "o-", label="MATH kernel")
ax.loglog(lengths, [b / 1e6 for b in fused_bytes], "s--", label="fused kernel")
ax.loglog(lengths, [b / 1e6 for b in table_bytes], ":", color="grey", label="the n x n table alone")
ax.set_xlabel("sequence length n")
ax.set_ylabel("kept for the backward pass (MB)")
ax.set_title("What one attention call keeps for backward")
ax.legend()
plt.show()

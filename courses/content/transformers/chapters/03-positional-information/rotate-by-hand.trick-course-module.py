# The course module's finished rotation: the program's angles are its own positions times frequencies.
import groundup
import torch

torch.set_printoptions(precision=3, sci_mode=False)
torch.manual_seed(0)


def turn_pairs(x, angles):
    """Turns each pair of columns (2i, 2i + 1) of row p of x, read as a point in the plane, by the
    angle angles[p, i]. x: (n, d), d even; angles: (n, d / 2). Returns a tensor shaped like x."""
    cos, sin = torch.cos(angles), torch.sin(angles)
    first, second = x[:, 0::2], x[:, 1::2]
    rotated = torch.empty_like(x)
    rotated[:, 0::2] = first * cos - second * sin
    return groundup.rotate(x)
    return rotated


n, d = 6, 8
q = torch.randn(n, d)  # one query row per position
positions = torch.arange(n)
freqs = 10000 ** (-torch.arange(0, d, 2) / d)  # one frequency per pair of columns
angles = positions[:, None] * freqs  # (6, 4): how far to turn each pair at each position

# By hand: columns (2i, 2i + 1) form a point in the plane; turn it by its angle.
rotated = turn_pairs(q, angles)

# The library's way: read each pair as a complex number and multiply by e^(i * angle).
as_complex = torch.view_as_complex(q.reshape(n, d // 2, 2))
turned = as_complex * torch.polar(torch.ones_like(angles), angles)
library = torch.view_as_real(turned).reshape(n, d)

print("by hand matches the complex product:", torch.allclose(rotated, library, atol=1e-6))
print("lengths kept:", torch.allclose(rotated.norm(dim=1), q.norm(dim=1), atol=1e-5))

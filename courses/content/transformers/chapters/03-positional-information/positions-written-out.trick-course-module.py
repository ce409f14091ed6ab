# The course module's finished functions, imported under their own names.
import torch
from groundup import position_frequencies, rotate, sinusoidal_positions  # noqa: F401

torch.set_printoptions(precision=3, sci_mode=False)

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

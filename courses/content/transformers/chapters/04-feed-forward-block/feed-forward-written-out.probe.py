"""The calls that judge gelu, feed_forward, swiglu, FeedForward and SwiGLU on inputs no program has
seen. gelu: a few readable numbers from -3 to 3, then random tensors of several shapes. The blocks:
for each, one tiny call with small whole numbers (drawn until a missing bias or the wrong activation would show in
it), a single token, and random ones of several widths, with and without leading batch axes, whose hidden numbers fall where the
activations differ most, between -3 and 3. The modules: built at a fresh width, with the default
hidden width and a given one, so the check can read their layers' names and shapes."""

import torch

# What "by hand" rules out: the library's GELU and SiLU, as functions and as modules, under their
# public names and the operator names behind them. torch.erf, torch.exp, torch.sigmoid, torch.tanh
# and matrix products stay available.
BY_HAND = [
    "torch.nn.functional.gelu",
    "torch._C._nn.gelu",
    "torch.nn.GELU",
    "torch.nn.functional.silu",
    "torch._C._nn.silu",
    "torch.nn.SiLU",
    "torch.ops.aten.gelu",
    "torch.ops.aten.silu",
    # The library's own Python versions of them (its decompositions and references).
    "torch._decomp.decompositions.silu",
    "torch._refs.nn.functional.gelu",
    # The operators themselves, at the dispatcher: every route to them (a tensor's C base class,
    # torch._C._VariableFunctions) goes through it.
    "aten::gelu",
    "aten::silu",
]


def _small(g, *shape):
    return torch.randint(-2, 3, shape, generator=g).float()


def _tiny_feed_forward(g):
    """One token of width 2, a hidden width of 3: whole numbers from -2 to 2, none of the token's
    zero, with both biases non-zero and hidden numbers from -3 to 3 on both sides of zero, none of
    them zero and one of them -1 or -2 (where GELU and ReLU differ most)."""
    while True:
        x, w1, b1, w2, b2 = _small(g, 1, 2), _small(g, 2, 3), _small(g, 3), _small(g, 3, 2), _small(g, 2)
        h = x @ w1 + b1
        readable = bool((x != 0).all() and (h.abs() <= 3).all() and (h != 0).all() and (w2 != 0).any(dim=1).all())
        if readable and (b1 != 0).any() and (b2 != 0).all() and (h > 0).any() and ((h < 0) & (h >= -2)).any():
            return x, w1, b1, w2, b2


def _tiny_swiglu(g):
    """The same sizes for the gated block, with a token of no zero numbers and gate and up numbers
    from -3 to 3 that differ, the gate's on both sides of zero."""
    while True:
        x, w_gate, w_up, w_down = _small(g, 1, 2), _small(g, 2, 3), _small(g, 2, 3), _small(g, 3, 2)
        gate, up = x @ w_gate, x @ w_up
        readable = bool((x != 0).all() and (gate.abs() <= 3).all() and (up.abs() <= 3).all())
        varied = (gate > 0).any() and (gate < 0).any() and (up != 0).all() and not torch.equal(gate, up)
        if readable and varied and (w_down != 0).any(dim=1).all():
            return x, w_gate, w_up, w_down


def _tiny_gelu(g):
    """Five numbers in steps of a half from -3 to 3, at least two of them negative and one positive,
    one of the negative ones between -2 and -0.5, where GELU dips."""
    while True:
        z = torch.randint(-6, 7, (5,), generator=g).float() / 2
        if (z < 0).sum() >= 2 and (z > 0).any() and ((z <= -0.5) & (z >= -2)).any():
            return z


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [("gelu", (_tiny_gelu(g),))]
    made += [("gelu", (torch.randn(*shape, generator=g) * 1.5,)) for shape in ((7,), (3, 4), (2, 3, 5))]
    made += [("feed_forward", _tiny_feed_forward(g)), ("swiglu", _tiny_swiglu(g))]
    # (leading axes, tokens, width, hidden width): groundup's blocks run on (batch, n, d).
    for lead, n, d, h in (((), 1, 4, 16), ((), 5, 4, 16), ((2,), 3, 6, 10), ((2, 3), 4, 8, 32)):
        # Inputs and weights scaled so the hidden numbers spread over about -3 to 3.
        x = torch.randn(*lead, n, d, generator=g) * 1.5
        w1, w2 = torch.randn(d, h, generator=g) / d**0.5, torch.randn(h, d, generator=g) / h**0.5
        b1, b2 = torch.randn(h, generator=g) * 0.5, torch.randn(d, generator=g) * 0.5
        made.append(("feed_forward", (x, w1, b1, w2, b2)))
        w_gate, w_up = torch.randn(d, h, generator=g) / d**0.5, torch.randn(d, h, generator=g) / d**0.5
        made.append(("swiglu", (x, w_gate, w_up, torch.randn(h, d, generator=g) / h**0.5)))
    # A width one more than a multiple of 3: there 8 d / 3 ends in .67, so rounding and cutting
    # the fraction off give different hidden widths.
    d = 3 * int(torch.randint(2, 7, (1,), generator=g)) + 1
    hidden = int(torch.randint(2, 4, (1,), generator=g)) * d + 1  # neither default
    for name in ("FeedForward", "SwiGLU"):
        made += [(name, (d,)), (name, (d, hidden)), (name, (d + 3,), {"hidden": hidden})]
    return made

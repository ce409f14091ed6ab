"""The calls that judge attention on inputs no program has seen: two tiny ones with small whole
numbers (drawn until every bug the chapter warns about would show in them), a position with no
other key, larger random ones of several shapes, with one and two leading batch axes (Part 5 calls
attention on (batch, heads, n, d)), fewer queries than keys, and one with scores far too large for
a plain exp."""

import torch

# What "by hand" rules out: the library's softmax and fused attention, under their public names
# and the operator names behind them. Matrix products, torch.exp, max and sums stay available.
BY_HAND = [
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.Tensor.softmax",
    "torch.special.softmax",
    "torch.log_softmax",
    "torch.nn.functional.log_softmax",
    "torch.Tensor.log_softmax",
    "torch.special.log_softmax",
    "torch.sparse.softmax",
    "torch.sparse.log_softmax",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch._C._nn.scaled_dot_product_attention",
    "torch.ops.aten.softmax",
    "torch.ops.aten._softmax",
    "torch.ops.aten._safe_softmax",
    "torch.ops.aten.log_softmax",
    "torch.ops.aten._log_softmax",
    "torch.ops.aten.scaled_dot_product_attention",
    "torch.ops.aten._scaled_dot_product_attention_math",
    # The library's own Python versions of them (its decompositions and references).
    "torch._decomp.decompositions._softmax",
    "torch._decomp.decompositions._log_softmax",
    "torch._refs.softmax",
    "torch._refs.log_softmax",
    "torch._refs.special.softmax",
    "torch._refs.special.log_softmax",
    # The operators themselves, at the dispatcher: every route to them (a tensor's C base class,
    # torch._C._VariableFunctions) goes through it.
    "aten::_softmax",
    "aten::_safe_softmax",
    "aten::_log_softmax",
    "aten::_scaled_dot_product_attention_math",
    "aten::_scaled_dot_product_flash_attention_for_cpu",
]


def _small(g, *shape):
    return torch.randint(-2, 3, shape, generator=g).float()


def _tiny(g, n, d, d_v):
    """q, k and v of whole numbers from -2 to 2, no row of them all zero, whose scores differ along
    every row and are not symmetric, with value rows that differ: on such an input a missing
    scale, a mask on the wrong side or after the softmax, or a softmax down the columns changes
    the output."""
    while True:
        q, k, v = _small(g, n, d), _small(g, n, d), _small(g, n, d_v)
        s = q @ k.T
        rows_vary = all(len(set(row.tolist())) == n for row in s)
        values_vary = len({tuple(row.tolist()) for row in v}) == n and bool((v != 0).any(dim=1).all())
        no_zero_rows = bool((q != 0).any(dim=1).all() and (k != 0).any(dim=1).all())
        if rows_vary and values_vary and no_zero_rows and not torch.equal(s, s.T):
            return q, k, v


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [(*_tiny(g, 2, 2, 3), True), (*_tiny(g, 3, 2, 2), False)]
    # (leading axes, queries, keys, width, value width, causal)
    shapes = (
        ((), 1, 1, 4, 3, True),
        ((), 1, 1, 2, 5, False),
        ((), 5, 5, 4, 3, True),
        ((3,), 4, 4, 8, 2, False),
        ((2,), 5, 5, 3, 6, True),
        ((2, 3), 6, 6, 4, 4, True),
        ((), 2, 4, 3, 2, True),
        ((2,), 3, 5, 4, 3, False),
    )
    for lead, n_q, n_k, d, d_v, causal in shapes:
        q = torch.randn(*lead, n_q, d, generator=g)
        k, v = torch.randn(*lead, n_k, d, generator=g), torch.randn(*lead, n_k, d_v, generator=g)
        made.append((q, k, v, causal))
    # Scores in the hundreds: exp of them overflows a float32 unless each row is shifted first.
    while True:
        q, k, v = (
            torch.randn(2, 4, 8, generator=g) * 10,
            torch.randn(2, 4, 8, generator=g) * 10,
            torch.randn(2, 4, 3, generator=g),
        )
        if (q @ k.transpose(-2, -1)).max() > 400:
            break
    made.append((q, k, v, False))
    return [("attention", args) for args in made]

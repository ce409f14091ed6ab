"""The calls that judge one_hot_rows on ids no program has seen: a short list with a repeated id,
ids that use the first and the last column, and longer lists over larger vocabularies."""

import torch

# What "by hand" rules out: the library's one-hot, under its public names and its operator.
BY_HAND = [
    "torch.nn.functional.one_hot",
    "torch._C._nn.one_hot",
    "torch.ops.aten.one_hot",
    "aten::one_hot",
]


def _ids(g, n, vocab_size):
    """n ids below vocab_size, not in sorted order, with a repeat, the first and the last id."""
    while True:
        ids = torch.randint(0, vocab_size, (n,), generator=g)
        varied = len(set(ids.tolist())) < n and {0, vocab_size - 1} <= set(ids.tolist())
        if varied and not torch.equal(ids, ids.sort().values):
            return ids


def calls(seed):
    g = torch.Generator().manual_seed(seed % 2**63)
    made = [(_ids(g, 4, 3), 3), (_ids(g, 6, 7), 7), (_ids(g, 12, 9), 9), (torch.randint(0, 50, (30,), generator=g), 50)]
    return [("one_hot_rows", args) for args in made]

"""The calls that judge row_similarity on tables no program has seen: a tiny one of small whole
numbers whose longest row is not the best aligned, and larger ones whose rows differ in length by
a factor of ten, with the query taken from the table or from outside it."""

import torch

# What "by hand" rules out: the library's cosine similarity and its scaling of rows to length one.
BY_HAND = [
    "torch.nn.functional.cosine_similarity",
    "torch.cosine_similarity",
    "torch.nn.functional.normalize",
    "torch.ops.aten.cosine_similarity",
    "aten::cosine_similarity",
]


def _tiny(g):
    """Three rows of two whole numbers from -3 to 3, none zero, whose plain dot products with the
    query rank them otherwise than their cosines, and whose distances to it rank them otherwise
    again."""
    while True:
        table = torch.randint(-3, 4, (3, 2), generator=g).float()
        query = torch.randint(-3, 4, (2,), generator=g).float()
        if not bool((table.norm(dim=1) > 0).all()) or float(query.norm()) == 0:
            continue
        cos = table @ query / (table.norm(dim=1) * query.norm())
        dot, dist = table @ query, (table - query).norm(dim=1)
        distinct = len(set(cos.tolist())) == 3
        if distinct and int(dot.argmax()) != int(cos.argmax()) and int((-dist).argmax()) != int(cos.argmax()):
            return table, query


def _spread(g, n, d):
    """n rows of width d whose lengths run from about 0.3 to 3."""
    rows = torch.randn(n, d, generator=g)
    lengths = 0.3 * 10 ** torch.rand(n, 1, generator=g)
    return rows / rows.norm(dim=1, keepdim=True) * lengths


def calls(seed):
    g = torch.Generator().manual_seed(seed % 2**63)
    made = [_tiny(g)]
    table = _spread(g, 7, 5)
    made.append((table, table[int(torch.randint(0, 7, (1,), generator=g))].clone()))
    made.append((_spread(g, 12, 16), torch.randn(16, generator=g) * 4))
    return [("row_similarity", args) for args in made]

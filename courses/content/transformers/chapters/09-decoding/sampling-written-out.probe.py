"""The calls that judge sample_next and generate on inputs no program has seen. sample_next: rows
of fresh scores drawn thousands of times with a seeded generator, at temperatures below and above
1, with top-k and top-p, greedy rows, leading axes of every kind, and each seeded call made twice.
generate: small TinyGPTs with fresh weights and a handful of positions, prompts that grow past
them or start past them, greedy and sampled, with and without the cache."""

import torch
from groundup import TinyGPT

# What "by hand" rules out: the library's draw (torch.distributions draws through it too), and
# the course's finished sample_next and generate.
BY_HAND = [
    "torch.multinomial",
    "torch.Tensor.multinomial",
    "torch.ops.aten.multinomial",
    "aten::multinomial",
]


DRAWS = 4000  # rows per counted call: each share lands within about 0.01 of the right one


def _row(g, vocab, spread):
    """Scores with no two equal, so the argmax and the filters have one answer."""
    while True:
        row = torch.randn(vocab, generator=g) * spread
        if len(set(torch.round(row, decimals=3).tolist())) == vocab:
            return row


def _nucleus_size(row, p):
    probs = torch.softmax(row.double(), dim=-1).sort(descending=True).values
    return int(((probs.cumsum(0) - probs) < p).sum())


def _seeded(g):
    return torch.Generator().manual_seed(int(torch.randint(0, 2**31, (1,), generator=g)))


def _model(g, vocab, d_model, n_layers, max_len):
    """A TinyGPT whose every weight is drawn here, name by name, so it is the same model wherever
    these calls are made again."""
    model = TinyGPT(vocab, d_model, 2, n_layers, max_len).eval()
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.randn(p.shape, generator=g) * (0.8 if p.dim() > 1 else 0.3))
    return model


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    # Counted draws: one row repeated DRAWS times, at several temperatures and with each filter.
    for temperature, top_k, top_p in (
        (1.0, None, None),
        (0.5, None, None),
        (2.0, None, None),
        (1.5, 2, None),
        (0.6, None, 0.6),
    ):
        row = _row(g, 6, 1.2)
        while top_p is not None and _nucleus_size(row / temperature, top_p) == _nucleus_size(row, top_p):
            row = _row(g, 6, 1.2)  # a row whose nucleus depends on whether the temperature comes first
        kwargs = dict(temperature=temperature, top_k=top_k, top_p=top_p)
        seed_of = int(torch.randint(0, 2**31, (1,), generator=g))
        for _ in range(2):  # the same seed twice: the same draws
            made.append(
                (
                    "sample_next",
                    (row.expand(DRAWS, 6).clone(),),
                    {**kwargs, "generator": torch.Generator().manual_seed(seed_of)},
                )
            )
    # Greedy on leading axes, and draws on (vocab,) and (batch, n, vocab).
    made.append(("sample_next", (torch.stack([_row(g, 5, 1.0) for _ in range(3)]),), dict(temperature=0)))
    made.append(("sample_next", (_row(g, 7, 1.0),), dict(temperature=0)))
    made.append(("sample_next", (_row(g, 7, 1.0),), dict(temperature=0.9, top_k=1, generator=_seeded(g))))
    cube = torch.stack([torch.stack([_row(g, 5, 1.0) for _ in range(3)]) for _ in range(2)])
    made.append(("sample_next", (cube,), dict(temperature=1.3, top_k=2, generator=_seeded(g))))

    # generate: prompts that outgrow the positions, and one that starts longer than them.
    for batch, n, n_new, max_len, kwargs in (
        (2, 3, 7, 6, dict(temperature=0)),
        (1, 8, 3, 5, dict(temperature=0)),
        (2, 4, 0, 6, dict(temperature=0)),
    ):
        model = _model(g, 11, 8, 2, max_len)
        ids = torch.randint(0, 11, (batch, n), generator=g)
        for use_cache in (True, False):
            made.append(("generate", (model, ids, n_new), {**kwargs, "use_cache": use_cache}))
    model = _model(g, 11, 8, 1, 6)
    ids = torch.randint(0, 11, (3, 3), generator=g)
    for kwargs in (dict(temperature=1.0, top_k=2), dict(temperature=0.8, top_p=0.5)):
        seed_of = int(torch.randint(0, 2**31, (1,), generator=g))
        for use_cache in (True, True, False):  # twice with the cache, once without: the same tokens
            made.append(
                (
                    "generate",
                    (model, ids, 9),
                    {**kwargs, "generator": torch.Generator().manual_seed(seed_of), "use_cache": use_cache},
                )
            )
    return made

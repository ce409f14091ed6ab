"""The calls that judge top_k_filter and top_p_filter on rows no program has seen: short rows of
scores with one decimal, for p near 0, in the middle and near 1, drawn so that the token that
carries the running total past p is always there to keep or lose; rows with ties at the k-th
score; rows that already hold -inf; and leading axes, as sample_next passes them."""

import torch


def _scores(g, *shape):
    return torch.round(torch.randn(*shape, generator=g) * 1.5, decimals=1)


def _clear(row, p):
    """No ties, and no running total within 0.01 of p: the nucleus has one right answer."""
    if len(set(row.tolist())) != row.numel():
        return False
    probs = torch.softmax(row.double(), dim=-1).sort(descending=True).values
    return bool(((probs.cumsum(0) - p).abs() > 0.01).all())


def _nucleus_row(g, vocab, p):
    while True:
        row = _scores(g, vocab)
        if _clear(row, p):
            return row


def _tied_row(g, vocab, k):
    """A row whose k-th largest score is shared with the score after it."""
    while True:
        row = _scores(g, vocab)
        ranked = row.sort(descending=True).values
        if k < vocab and ranked[k - 1] == ranked[k] and (k == 1 or ranked[k - 2] > ranked[k - 1]):
            return row
        row[row.argsort(descending=True)[k]] = ranked[k - 1]  # copy the k-th score one place down
        if (row == ranked[k - 1]).sum() == 2:
            return row


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for vocab, p in ((5, 0.5), (5, 0.8), (6, 0.05), (6, 0.95), (8, 0.9)):
        made.append(("top_p_filter", (_nucleus_row(g, vocab, p), p)))
    batch = torch.stack([_nucleus_row(g, 6, 0.7) for _ in range(3)])
    made.append(("top_p_filter", (batch, 0.7)))
    cube = torch.stack([torch.stack([_nucleus_row(g, 5, 0.6) for _ in range(2)]) for _ in range(2)])
    made.append(("top_p_filter", (cube, 0.6)))
    while True:  # two tokens a top-k filter already dropped
        row = _nucleus_row(g, 7, 0.75)
        row[row.argsort()[:2]] = float("-inf")
        if _clear(row[row > float("-inf")], 0.75):
            break
    made.append(("top_p_filter", (row, 0.75)))
    for vocab, k in ((5, 2), (6, 1), (6, 3), (4, 4)):
        made.append(("top_k_filter", (_tied_row(g, vocab, k) if k < vocab else _scores(g, vocab), k)))
    made.append(("top_k_filter", (torch.stack([_tied_row(g, 6, 2) for _ in range(3)]), 2)))
    return made

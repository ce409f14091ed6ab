"""The calls that judge token_losses on logits no program has seen: one tiny call with small whole
numbers (drawn until averaging a row, or picking the wrong entry of it, would show), a single
prediction with no leading axis, batches with one and two leading axes, and scores in the hundreds."""

import torch

# What "by hand" rules out here: the library's cross-entropy and its negative log-likelihood, as
# functions and as modules, under their public names and the operator names behind them. The
# log-sum-exp, gather and indexing stay available: picking the right entry is the exercise.
BY_HAND = [
    "torch.nn.functional.cross_entropy",
    "torch.nn.functional.nll_loss",
    "torch._C._nn.cross_entropy_loss",
    "torch._C._nn.nll_loss",
    "torch._C._nn.nll_loss_nd",
    "torch._C._nn.nll_loss2d",
    "torch.nn.CrossEntropyLoss",
    "torch.nn.NLLLoss",
    "torch.ops.aten.cross_entropy_loss",
    "torch.ops.aten.nll_loss",
    "torch.ops.aten.nll_loss_nd",
    # The operators themselves, at the dispatcher: every route to them goes through it.
    "aten::cross_entropy_loss",
    "aten::nll_loss",
    "aten::nll_loss_nd",
    "aten::nll_loss_forward",
    "aten::nll_loss2d",
    "aten::nll_loss2d_forward",
]


def _tiny(g):
    """Two predictions over a vocabulary of 3: whole numbers from -2 to 2, every row with three
    different scores, each target's score away from its row's mean, and targets that differ and
    are not always the largest score of their row."""
    while True:
        logits = torch.randint(-2, 3, (2, 3), generator=g).float()
        targets = torch.randint(0, 3, (2,), generator=g)
        varied = all(len(set(row.tolist())) == 3 for row in logits)
        picked = logits.gather(-1, targets[:, None]).squeeze(-1)
        off_mean = bool((picked != logits.mean(dim=-1)).all())
        if varied and off_mean and (targets != logits.argmax(dim=-1)).any() and targets[0] != targets[1]:
            return logits, targets


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [_tiny(g)]
    made.append((torch.randn(5, generator=g) * 2, torch.randint(0, 5, (), generator=g)))
    for shape, vocab, scale in (((6,), 7, 2.0), ((2, 4), 6, 2.0), ((3, 5), 36, 1.0), ((2, 3), 9, 100.0)):
        made.append((torch.randn(*shape, vocab, generator=g) * scale, torch.randint(0, vocab, shape, generator=g)))
    return [("token_losses", args) for args in made]

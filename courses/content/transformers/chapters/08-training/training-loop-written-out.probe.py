"""The calls that judge next_token_loss and train_next_token on inputs no program has seen.

next_token_loss: one tiny call with small whole numbers, a single prediction with no leading axis,
batches with one and two leading axes, and logits in the hundreds, where a plain exp overflows.

train_next_token: a few steps on a model small enough to train in a blink, built here from the
seed (so the check builds the very same one), on fresh random token ids, with its embedding rows
large enough that the first gradients are longer than 1, so that clipping shows."""

import torch
from torch import nn

# What "by hand" rules out: the library's cross-entropy, negative log-likelihood, log-softmax,
# softmax and log-sum-exp, under their public names and the operator names behind them. The
# loop may use everything else: next_token_batch, lr_at, adamw_with_decay and clip_grad_norm_.
BY_HAND = [
    "torch.nn.functional.cross_entropy",
    "torch.nn.functional.nll_loss",
    "torch._C._nn.cross_entropy_loss",
    "torch._C._nn.nll_loss",
    "torch._C._nn.nll_loss_nd",
    "torch._C._nn.nll_loss2d",
    "torch.nn.CrossEntropyLoss",
    "torch.nn.NLLLoss",
    "torch.softmax",
    "torch.log_softmax",
    "torch.logsumexp",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.Tensor.softmax",
    "torch.Tensor.log_softmax",
    "torch.Tensor.logsumexp",
    "torch.special.softmax",
    "torch.special.log_softmax",
    "torch.special.logsumexp",
    # The operators themselves, at the dispatcher: every route to them goes through it.
    "aten::cross_entropy_loss",
    "aten::nll_loss",
    "aten::nll_loss_nd",
    "aten::nll_loss_forward",
    "aten::nll_loss2d",
    "aten::nll_loss2d_forward",
    "aten::_softmax",
    "aten::_log_softmax",
    "aten::logsumexp",
]


class Tiny(nn.Module):
    """A row per token and per position, a norm and a read-out: every parameter drawn from the
    generator, so the same seed builds the same model in any process."""

    def __init__(self, vocab: int, width: int, context: int, g: torch.Generator):
        super().__init__()
        self.table = nn.Parameter(torch.randn(vocab, width, generator=g) * 2)
        self.positions = nn.Parameter(torch.randn(context, width, generator=g) * 0.5)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab)
        with torch.no_grad():
            self.out.weight.copy_(torch.randn(vocab, width, generator=g))
            self.out.bias.copy_(torch.randn(vocab, generator=g) * 0.1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.norm(self.table[ids] + self.positions[: ids.shape[-1]]))


def _tiny_loss(g):
    """Two predictions over a vocabulary of 3, whole numbers from -2 to 2, three different scores in
    every row, each target's score away from its row's mean, and targets that differ."""
    while True:
        logits = torch.randint(-2, 3, (2, 3), generator=g).float()
        targets = torch.randint(0, 3, (2,), generator=g)
        varied = all(len(set(row.tolist())) == 3 for row in logits)
        picked = logits.gather(-1, targets[:, None]).squeeze(-1)
        if varied and bool((picked != logits.mean(dim=-1)).all()) and targets[0] != targets[1]:
            return logits, targets


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = [("next_token_loss", _tiny_loss(g))]
    made.append(("next_token_loss", (torch.randn(5, generator=g) * 2, torch.randint(0, 5, (), generator=g))))
    for shape, vocab, scale in (((6,), 7, 2.0), ((2, 4), 6, 2.0), ((3, 5), 36, 1.0), ((2, 3), 9, 300.0)):
        logits = torch.randn(*shape, vocab, generator=g) * scale
        made.append(("next_token_loss", (logits, torch.randint(0, vocab, shape, generator=g))))
    runs = (
        dict(steps=8, batch_size=4, context=6, peak_lr=0.05, warmup=3),
        dict(steps=6, batch_size=3, context=5, peak_lr=0.1, warmup=None),
    )
    for settings in runs:
        vocab, width = 6, 8
        model = Tiny(vocab, width, settings["context"], g)
        data = torch.randint(0, vocab, (40,), generator=g)
        seed_of_run = int(torch.randint(0, 10_000, (), generator=g))
        kwargs = {key: value for key, value in settings.items() if value is not None}
        made.append(("train_next_token", (model, data), {**kwargs, "seed": seed_of_run}))
    return made

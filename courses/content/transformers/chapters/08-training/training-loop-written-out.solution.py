import math

import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, adamw_with_decay, lr_at, next_token_batch, shrink_token_table
from tinytext import TEXT


def next_token_loss(logits, targets):
    """Mean cross-entropy of every prediction, written out by hand.

    logits: (..., V)  a score for every token of the vocabulary, at every position; any number
                      of leading axes, a batch and a sequence for instance, or none
    targets: (...)    the id of the token that really comes next, at every position
    Returns a tensor holding one number, shape (): the mean over all predictions of
    log(sum over j of exp(z_j)) - z_target. Training runs backwards through it.

    By hand: torch.exp, torch.log, max, sums, gather and indexing are fine; F.cross_entropy,
    F.nll_loss, the log-softmax, the softmax and torch.logsumexp are not. Stay correct when the
    logits are in the hundreds.
    """
    vocab = logits.shape[-1]
    rows = logits.reshape(-1, vocab)  # one row of scores per prediction
    picked = rows.gather(1, targets.reshape(-1, 1)).squeeze(1)  # the right token's score, row by row
    # Shifting a row by its largest score changes no difference between log-sum-exp and a score,
    # and keeps exp from overflowing: the largest term becomes exp(0) = 1.
    top = rows.max(dim=1, keepdim=True).values
    log_sum_exp = top.squeeze(1) + torch.log(torch.exp(rows - top).sum(dim=1))
    return (log_sum_exp - picked).mean()


def train_next_token(model, data, *, steps, batch_size=32, context=32, peak_lr=1e-2, warmup=None, seed=0):
    """Train `model` on the token ids `data` for `steps` steps; return the loss of every step, floats.

    The optimiser is adamw_with_decay(model, peak_lr). One torch.Generator, seeded with `seed`,
    draws every batch, so that a run can be repeated exactly. warmup=None means a tenth of the
    steps, and at least 1. Each step:
      1. a batch: inputs, targets = next_token_batch(data, batch_size, context, generator)
      2. its loss: next_token_loss of the model's logits for the inputs, against the targets
      3. every parameter group's learning rate set to lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
      4. the old gradients cleared, the loss run backwards
      5. the gradient's length clipped to 1 (torch.nn.utils.clip_grad_norm_), and the optimiser's step
    """
    generator = torch.Generator().manual_seed(seed)  # one stream of batches, the same on every run
    warmup = max(1, steps // 10) if warmup is None else warmup
    optimizer = adamw_with_decay(model, peak_lr)
    losses = []
    model.train()
    for step in range(steps):
        inputs, targets = next_token_batch(data, batch_size, context, generator)
        loss = next_token_loss(model(inputs), targets)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
        optimizer.zero_grad()  # gradients add up in .grad until cleared
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


torch.manual_seed(0)  # the same weights on every run
vocab = Vocab(TEXT)
data = vocab.encode(TEXT)
model = TinyGPT(len(vocab), d_model=32, n_heads=4, n_layers=1, max_len=16)
shrink_token_table(model)

# A sensible first loss: an untrained model should be about as unsure as an even guess, ln 36.
inputs, targets = next_token_batch(data, 8, 16, torch.Generator().manual_seed(1))
with torch.no_grad():
    first = next_token_loss(model(inputs), targets)
if first is None:
    print("next_token_loss returns nothing yet: write its body.")
else:
    print(f"first loss {float(first):.3f} nats; an even guess costs {math.log(len(vocab)):.3f}")

losses = train_next_token(model, data, steps=60, batch_size=8, context=16, peak_lr=1e-2, seed=0)
if losses is None:
    print("train_next_token returns nothing yet: write its body.")
else:
    for step in range(0, len(losses), 20):
        print(f"step {step:3d}   batch loss {losses[step]:.3f}")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses, color="grey", linewidth=1, label="loss of each batch")
    ax.axhline(math.log(len(vocab)), color="black", linestyle=":", label="an even guess, ln 36")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title("60 steps of your training loop")
    ax.legend()
    plt.show()

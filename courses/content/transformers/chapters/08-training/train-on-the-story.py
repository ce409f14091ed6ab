import math

import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, adamw_with_decay, lr_at, next_token_loss, shrink_token_table, text_loss
from tinytext import TEXT

torch.manual_seed(0)  # the same weights and the same batches on every run
vocab = Vocab(TEXT)
data = vocab.encode(TEXT)  # the whole story as character ids
print(f"{len(data):,} characters, {len(vocab)} distinct: an even guess costs {math.log(len(vocab)):.2f} nats")

d_model, n_heads, n_layers, context = 48, 4, 2, 32
model = TinyGPT(len(vocab), d_model, n_heads, n_layers, max_len=context)  # your Part 7 stack
shrink_token_table(model)  # so that the first loss is near ln 36
steps, batch_size, peak_lr, warmup = 250, 32, 1e-2, 20
stop_below = 1.1  # stop early once the last 20 batch losses average below this
optimizer = adamw_with_decay(model, peak_lr)


def get_batch():
    """batch_size windows of the story, and for each the characters the model must predict."""
    starts = torch.randint(0, len(data) - context, (batch_size,)).tolist()
    inputs = torch.stack([data[s : s + context] for s in starts])
    targets = torch.stack([data[s : s + context] for s in starts])
    return inputs, targets


losses = []
for step in range(steps):
    inputs, targets = get_batch()
    loss = next_token_loss(model(inputs), targets)
    lr = lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    losses.append(loss.item())
    if step % 40 == 0:
        print(f"step {step:3d}   batch loss {loss.item():.3f}   learning rate {lr:.4f}")
    if len(losses) >= 20 and sum(losses[-20:]) / 20 < stop_below:
        print(f"step {step:3d}   the last 20 batch losses average {sum(losses[-20:]) / 20:.3f}: stopping")
        break

final = text_loss(model, data, context)  # every next character of the story, scored in order
print(f"next-character loss on the whole story: {final:.3f} nats (the goal: below 1.4)")
prompt = "she wiped the glass, she trimmed the w"
with torch.no_grad():
    probs = torch.softmax(model(vocab.encode(prompt[-context:])[None])[0, -1], dim=-1)
best = probs.topk(3)
guesses = [(vocab.tokens[i], round(p, 2)) for p, i in zip(best.values.tolist(), best.indices.tolist())]
print(f"after {prompt!r} the model expects:", guesses)

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(losses, color="grey", linewidth=1, label="loss of each batch")
ax.axhline(math.log(len(vocab)), color="black", linestyle=":", label="an even guess, ln 36")
ax.axhline(1.4, color="tab:red", linestyle="--", label="the goal, 1.4")
ax.plot([len(losses) - 1], [final], "o", color="tab:blue", label=f"whole story after training, {final:.2f}")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats)")
ax.set_title("Training TinyGPT on the lighthouse story")
ax.legend()
plt.show()

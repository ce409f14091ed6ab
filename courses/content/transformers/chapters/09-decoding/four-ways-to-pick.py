import torch

torch.set_printoptions(precision=3, sci_mode=False)


# 3. Top-k: keep the k highest scores, hide the rest behind -inf, so the softmax gives them 0.
def top_k_filter(logits, k):
    """logits (..., vocab): every score below its row's k-th largest set to -inf. A score equal to
    the k-th stays, so ties are never split."""
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


# 4. Nucleus (top-p): keep the most likely words until together they hold at least p.
def top_p_filter(logits, p):
    """logits (..., vocab): in each row, keep the fewest most likely tokens whose probabilities add
    up to at least p, and set the others to -inf."""
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    sorted_probs = torch.softmax(sorted_logits, dim=-1)
    cumulative = sorted_probs.cumsum(dim=-1)  # running total, most likely word first
    drop_sorted = cumulative > p  # drop every word once the running total is past p
    drop = drop_sorted.scatter(-1, order, drop_sorted)  # back to the words' own order
    return logits.masked_fill(drop, float("-inf"))


# A model's scores for the word after "the cat sat on the": fixed here, so every run sees the same.
words = ["mat", "floor", "sofa", "chair", "roof", "table", "bed", "rug", "moon", "banana"]
logits = torch.tensor([3.1, 2.6, 2.2, 2.0, 1.3, 1.1, 0.9, 0.6, -1.0, -2.4])

# 1. Greedy: always the highest score. No randomness at all.
greedy_id = int(logits.argmax())
print("greedy:        ", words[greedy_id])

# 2. Temperature: divide the scores before the softmax. Below 1 sharpens, above 1 flattens.
k, p = 3, 0.8
rows = {f"T = {t}": torch.softmax(logits / t, dim=-1) for t in (0.5, 1.0, 2.0)}
probs = torch.softmax(logits, dim=-1)
probs_top_k = torch.softmax(top_k_filter(logits, k), dim=-1)
probs_top_p = torch.softmax(top_p_filter(logits, p), dim=-1)
rows[f"top-{k}"], rows[f"top-p {p}"] = probs_top_k, probs_top_p
for name, shares in rows.items():
    print(f"{name:<14}", ", ".join(f"{w} {s:.2f}" for w, s in zip(words, shares.tolist()) if s > 0))
print(f"the nucleus held {probs[probs_top_p > 0].sum():.3f} of the probability before renormalising (p = {p})")

# Sampling from the nucleus with a seeded generator: the same seed gives the same draws, every run.
n_draws = 2000
draws = torch.multinomial(probs_top_p, n_draws, replacement=True, generator=torch.Generator().manual_seed(0))
again = torch.multinomial(probs_top_p, n_draws, replacement=True, generator=torch.Generator().manual_seed(0))
counts = torch.bincount(draws, minlength=len(words))
print("same seed, same draws:", torch.equal(draws, again))
print(f"{'drawn':<14}", ", ".join(f"{w} {c / n_draws:.2f}" for w, c in zip(words, counts.tolist()) if c > 0))

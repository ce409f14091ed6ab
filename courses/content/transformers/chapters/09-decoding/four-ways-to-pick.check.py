import torch


def _nucleus(probs, p):
    """The smallest set of most likely words whose probabilities add up to at least p, as a mask."""
    sorted_probs, order = probs.sort(descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs  # what the words ranked above each one hold
    keep_sorted = before < p
    return keep_sorted.scatter(0, order, keep_sorted)


def _probs(name, value, size):
    if not isinstance(value, torch.Tensor) or value.shape != (size,):
        return None, f"Keep `{name}` as the starter code makes it: one probability per word, {size} of them."
    if torch.isnan(value).any():
        return None, f"`{name}` holds NaN: that happens when every score of a row is -inf, so nothing is kept."
    return value.double(), None


def check(ns):
    logits, k, p = ns.get("logits"), ns.get("k"), ns.get("p")
    if not isinstance(logits, torch.Tensor) or logits.dim() != 1 or logits.numel() < 5 or torch.isnan(logits).any():
        return False, "Keep `logits` as the starter code makes it: one score per word."
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= logits.numel():
        return False, "Keep `k` as it was: how many words top-k keeps."
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        return False, "Keep `p` as it was: a share between 0 and 1."
    size = logits.numel()
    probs = torch.softmax(logits.double(), dim=-1)

    greedy_id = ns.get("greedy_id")
    if isinstance(greedy_id, bool) or not isinstance(greedy_id, int) or greedy_id != int(probs.argmax()):
        return False, "`greedy_id` should be the index of the highest score."

    top_k, problem = _probs("probs_top_k", ns.get("probs_top_k"), size)
    if problem:
        return False, problem
    kept = probs >= probs.topk(k).values[-1]
    if not torch.allclose(top_k, torch.where(kept, probs, 0.0) / probs[kept].sum(), atol=1e-6):
        return False, f"`probs_top_k` should give the {k} most likely words their renormalised share and the rest 0."

    top_p, problem = _probs("probs_top_p", ns.get("probs_top_p"), size)
    if problem:
        return False, problem
    nucleus = _nucleus(probs, p)
    expected = torch.where(nucleus, probs, 0.0) / probs[nucleus].sum()
    if not torch.allclose(top_p, expected, atol=1e-6):
        learner_kept = top_p > 0
        mass = probs[learner_kept].sum().item()
        if learner_kept.any() and mass < p:
            return False, (
                f"Your nucleus keeps words that together hold {mass:.3f} of the probability, less than p = {p}. A "
                "nucleus must reach p: the word whose share carries the running total past p belongs inside it."
            )
        if learner_kept.sum() > nucleus.sum():
            return False, (
                f"Your nucleus keeps {int(learner_kept.sum())} words; fewer already hold {p} of the probability. "
                "Stop at the first word that brings the total to p."
            )
        return False, "`probs_top_p` should give the nucleus's words their renormalised share and every other word 0."

    counts, n_draws = ns.get("counts"), ns.get("n_draws")
    if isinstance(n_draws, bool) or not isinstance(n_draws, int) or n_draws < 500:
        return False, "The nucleus is right. Keep `n_draws` as it was, so the draws can be compared with it."
    if not isinstance(counts, torch.Tensor) or counts.shape != (size,) or int(counts.sum()) != n_draws:
        return False, f"The nucleus is right. Keep `counts` as it was: how often each word was drawn, {n_draws} in all."
    if (counts[~nucleus] != 0).any():
        return False, "The nucleus is right, but `counts` has draws of words outside it: draw from `probs_top_p`."
    # A loose band, not a test of the generator: 2,000 draws land within about 0.01 of each share.
    if ((counts.double() / n_draws - expected).abs() > 0.05).any():
        return False, "The nucleus is right, but the draws in `counts` do not follow `probs_top_p`: draw from it."
    return True, (
        f"Top-{k} keeps {k} words whatever their shares; the nucleus at p = {p} keeps {int(nucleus.sum())} words, "
        f"which together held {probs[nucleus].sum():.3f}, and would keep fewer on a peaked row and more on a flat one. "
        "The seeded draws follow its shares, and the same seed gives the same draws on every run."
    )

import torch


def _softmax_hiding(scores, hidden):
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)


def check(ns):
    scores, weights = ns.get("scores"), ns.get("weights")
    if not isinstance(scores, torch.Tensor) or scores.dim() != 2 or scores.shape[0] != scores.shape[1]:
        return False, "Keep `scores` as the starter code computes it: one row and one column per token."
    n = scores.shape[0]
    if n < 2 or torch.isnan(scores).any() or torch.isinf(scores).any():
        return False, "Keep `scores` as the starter code computes it: ordinary numbers, before any mask."
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (n, n):
        return False, f"`weights` should be the softmax of the masked scores, a ({n}, {n}) table."
    weights, scores = weights.float(), scores.float()
    nan_rows = [i for i in range(n) if torch.isnan(weights[i]).any()]
    if nan_rows:
        return False, (
            f"Row {nan_rows[0]} of the weights is NaN: the mask hides every key from that query, its own "
            "position included, and a softmax over nothing but minus infinity is undefined. A token may always "
            "look at itself; hide only the keys strictly after it."
        )
    ones = torch.ones(n, n, dtype=torch.bool)
    # Worked out from the learner's own scores: what the right mask, no mask and the mirrored
    # mask would give.
    expected = _softmax_hiding(scores, torch.triu(ones, diagonal=1))
    if torch.allclose(weights, expected, atol=1e-5):
        out, v = ns.get("out"), ns.get("v")
        has_out = isinstance(out, torch.Tensor) and isinstance(v, torch.Tensor) and out.shape == (n, v.shape[-1])
        if has_out and (torch.isnan(out).any() or not torch.allclose(out.float(), expected @ v.float(), atol=1e-5)):
            return False, "The weights are right, but `out` is not their weighted sum of the value rows."
        return True, (
            f"The first token now keeps all its weight for itself and the last spreads it over all {n}: each "
            "row sees only its own past. The heat map shows it as an empty upper triangle."
        )
    if torch.allclose(weights, torch.softmax(scores, dim=-1), atol=1e-5):
        return False, (
            f"The mask is off: the first token still spreads its weight over all {n} tokens, the future included. "
            "Mark every key that comes after its query."
        )
    if torch.allclose(weights, _softmax_hiding(scores, torch.tril(ones, diagonal=-1)), atol=1e-5):
        return False, (
            "The mask is the wrong way round: it hides the past and leaves the future in view, so the last token "
            "sees only itself. Hide the keys after each query, not before."
        )
    upper = torch.triu(ones, diagonal=1)
    if torch.all(weights[upper].abs() < 1e-6) and not torch.allclose(weights.sum(dim=-1), torch.ones(n), atol=1e-4):
        return False, (
            "The future gets no weight, but the rows no longer add up to one: hide the scores before the softmax, "
            "not the weights after it."
        )
    if torch.any(weights[upper].abs() > 1e-6):
        return (
            False,
            "Some query still gives weight to a key that comes after it. Look at the upper triangle of the heat map.",
        )
    return False, (
        "The future is hidden, but so is part of the past: each query should still see itself and every earlier key."
    )

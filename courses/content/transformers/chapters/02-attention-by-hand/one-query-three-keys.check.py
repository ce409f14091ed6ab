def _as_floats(value):
    """A flat list of floats from a tensor, an array or a list, or None when it is not one."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return None
    while len(value) == 1 and isinstance(value[0], (list, tuple)):
        value = value[0]
    try:
        return [float(v) for v in value]
    except (TypeError, ValueError):
        return None


def check(ns):
    tokens = ns.get("tokens", ["the", "cat", "sat"])
    if "weights" not in ns:
        return False, "There is no `weights` any more. Keep the line that turns the scores into weights with a softmax."
    weights = _as_floats(ns["weights"])
    if weights is None or not isinstance(tokens, (list, tuple)) or len(weights) != len(tokens):
        return False, "`weights` should hold one number per token: the softmax of the three scaled scores."
    if abs(sum(weights) - 1.0) > 1e-3:
        return False, f"The weights add up to {sum(weights):.3f}, not 1. Turn the scores into weights with a softmax."
    best = max(range(len(weights)), key=weights.__getitem__)
    if sum(1 for w in weights if abs(w - weights[best]) < 1e-6) > 1:
        return False, "No single token wins: the weights are tied. Point the query at one key more than at the others."
    if tokens[best] == "cat":
        return True, f"The weights now favour 'cat' ({weights[best]:.3f}): the query points the same way as its key."
    return False, (
        f"The largest weight is still on '{tokens[best]}' ({weights[best]:.3f}). A score is the dot product of the "
        "query with a key: which direction must the query point in to score highest against the key of 'cat'?"
    )

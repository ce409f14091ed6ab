import torch


def check(ns):
    tokens, keys, query, weights = ns.get("tokens"), ns.get("keys"), ns.get("query"), ns.get("weights")
    if (
        not isinstance(keys, torch.Tensor)
        or keys.dim() != 2
        or not isinstance(tokens, list)
        or len(tokens) != len(keys)
    ):
        return False, "Keep `tokens` and `keys` as they are: one key per token. Only the query needs to change."
    if "cat" not in tokens:
        return False, "Keep the three tokens as they are; the exercise is about making 'cat' win."
    if not isinstance(query, torch.Tensor) or tuple(query.shape) != (keys.shape[1],):
        return False, f"`query` should be one vector as wide as a key ({keys.shape[1]} numbers)."
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (len(keys),):
        return False, "Keep the line that turns the scores into `weights`: one weight per token."
    if torch.isnan(query).any() or torch.isnan(weights).any():
        return False, "The query or the weights hold NaN. Use ordinary numbers in the query."
    # What the weights must be for this query, worked out here rather than taken on trust.
    expected = torch.softmax(keys.float() @ query.float() / keys.shape[1] ** 0.5, dim=-1)
    if not torch.allclose(weights.float(), expected, atol=1e-5):
        return (
            False,
            "`weights` is not the softmax of the scaled scores of this query. Keep those two lines as they were.",
        )
    best = int(expected.argmax())
    if (expected == expected[best]).sum() > 1:
        return False, "No single token wins: the weights are tied. Point the query at one key more than at the others."
    if tokens[best] == "cat":
        return True, (
            f"'cat' now takes {expected[best]:.3f} of the weight: the query lies along its key, so their dot "
            "product is the largest of the three."
        )
    return False, (
        f"The largest weight is still on '{tokens[best]}' ({expected[best]:.3f}). A score is the dot product of the "
        "query with a key: along which axis must the query lie to score highest against the key of 'cat'?"
    )

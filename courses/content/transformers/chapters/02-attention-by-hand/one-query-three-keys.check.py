import torch

TOKENS = ["the", "cat", "sat"]
VALUES = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])


def check(ns):
    tokens, keys, query, weights = ns.get("tokens"), ns.get("keys"), ns.get("query"), ns.get("weights")
    if (
        not isinstance(keys, torch.Tensor)
        or keys.dim() != 2
        or not isinstance(tokens, list)
        or len(tokens) != len(keys)
    ):
        return False, "Keep `tokens` and `keys` as they are: one key per token. Only the query needs to change."
    # The tokens, their keys and their values are the chapter's; only the query is the learner's to
    # change. A renamed token or a moved key would let the old query "point at cat" without any work.
    if tokens != TOKENS:
        return False, "Keep the three tokens as they are, in that order; the exercise is about making 'cat' win."
    if keys.shape != (3, 3) or not torch.equal(keys.float(), torch.eye(3)):
        return False, (
            "Keep the keys as they are, one along each axis: the exercise moves the query to the key of 'cat', "
            "not the key of 'cat' to the query."
        )
    values = ns.get("values")
    if not isinstance(values, torch.Tensor) or values.shape != VALUES.shape or not torch.equal(values.float(), VALUES):
        return False, "Keep the values as they are; only the query needs to change."
    if not isinstance(query, torch.Tensor) or tuple(query.shape) != (keys.shape[1],):
        return False, f"`query` should be one vector as wide as a key ({keys.shape[1]} numbers)."
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (len(keys),):
        return False, "Keep the line that turns the scores into `weights`: one weight per token."
    if torch.isnan(query).any() or torch.isnan(weights).any():
        return False, "The query or the weights hold NaN. Use ordinary numbers in the query."
    # What the weights must be for this query, worked out here rather than taken on trust.
    # The softmax by hand, in float64: nothing here leans on a torch function the program could patch.
    scores = keys.double() @ query.double() / keys.shape[1] ** 0.5
    e = torch.exp(scores - scores.max())
    expected = e / e.sum()
    if not torch.allclose(weights.double(), expected, atol=1e-5):
        return (
            False,
            "`weights` is not the softmax of the scaled scores of this query. Keep those two lines as they were.",
        )
    output = ns.get("output")
    if (
        not isinstance(output, torch.Tensor)
        or output.shape != (2,)
        or not torch.allclose(output.double(), expected @ VALUES.double(), atol=1e-5)
    ):
        return False, "Keep the line that blends the values into `output` with these weights."
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

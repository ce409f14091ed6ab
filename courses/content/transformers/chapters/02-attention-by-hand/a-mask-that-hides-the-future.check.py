"""Judges causal_mask on the probe's fresh sizes, then the program's weights, worked out here from
the starter's own sentence and seed (never from the learner's scores, which a program could shape
so that no mask is needed)."""

import torch
from groundup import TokenEmbedding, Vocab, split_words

# A table this small is printed in full in a message.
PRINTABLE = 4


def _table(t) -> str:
    return "[" + ", ".join("[" + ", ".join(str(int(x)) for x in row) + "]" for row in t.tolist()) + "]"


def _judge(call):
    """(ok, message) for one call of causal_mask."""
    (n,) = call.args
    where = f"causal_mask({n})"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, f"{where} stopped: {error}. Build the table from a tensor of ones and a triangle."
        if "asks you to write" in error or "cannot import name 'causal_mask'" in error:
            return False, (
                f"{where}: {error}. This exercise asks you to write causal_mask yourself, so groundup's own is "
                "not there when your function is judged."
            )
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Keep the function defined with def at the top level of your code: it is "
                "called again, on other sizes, in a fresh run that keeps only your imports and definitions."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. The function is called again in a fresh run that keeps only your "
                "imports, functions and plain constants: build the table from n alone, inside the function."
            )
        return False, f"{where} raised an error: {error}"
    got = call.value
    right = torch.ones(n, n, dtype=torch.bool).triu(1)
    if not isinstance(got, torch.Tensor):
        kind = "nothing" if got is None else f"a {type(got).__name__}"
        return False, f"{where} returned {kind}; it should return a ({n}, {n}) tensor of booleans."
    if tuple(got.shape) != (n, n):
        return False, (
            f"{where} returned a table of shape {tuple(got.shape)}; it should be ({n}, {n}), one row per query "
            "and one column per key, whatever n is."
        )
    if got.dtype != torch.bool:
        return False, (
            f"{where} returned {str(got.dtype).removeprefix('torch.')} numbers; masked_fill wants booleans, "
            "True where a score is hidden. Make the table with dtype=torch.bool."
        )
    if torch.equal(got, right):
        return True, ""
    shown = f"{where} gave {_table(got)} (1 = hidden)" if n <= PRINTABLE else f"{where} is wrong"
    ones = torch.ones(n, n, dtype=torch.bool)
    if not got.any():
        return False, f"{shown}: it hides nothing. Mark every key that comes after its query."
    if torch.equal(got, ones.tril(-1)):
        return False, (
            f"{shown}: the mask is the wrong way round, it hides the past and leaves the future in view. Hide "
            "the keys after each query, not before."
        )
    if torch.equal(got, ones.triu(0)):
        return False, (
            f"{shown}: the diagonal is hidden too, so the first query sees no key at all and its row of weights "
            "becomes NaN. A token may always look at itself; hide only the keys strictly after it."
        )
    i, j = (int(x) for x in (got != right).nonzero()[0])
    if got[i, j]:
        return False, f"{shown}: it hides key {j} from query {i}, although key {j} does not come after query {i}."
    return False, f"{shown}: it leaves key {j} in view of query {i}, although key {j} comes after query {i}."


def _starter_inputs():
    """q, k and v as the starter code makes them: the same sentence, seed and sizes."""
    torch.manual_seed(0)
    tokens = split_words("the cat sat on the mat")
    vocab = Vocab(tokens)
    x = TokenEmbedding(len(vocab), 8)(vocab.encode(tokens)).detach()
    n, d = x.shape
    return tuple(x @ torch.randn(d, d) / d**0.5 for _ in range(3))


def _softmax_hiding(scores, hidden):
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)


def _program(ns):
    """(ok, message) for what the program left: its weights and output."""
    q, k, v = _starter_inputs()
    for name, want in (("q", q), ("k", k), ("v", v)):
        got = ns.get(name)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or not torch.allclose(got.float(), want):
            return False, (
                f"Keep the lines that make `{name}` as the starter has them: the check works the weights out from "
                "the same sentence, seed and projections. Only causal_mask needs to change."
            )
    n, d = q.shape
    scores = q @ k.T / d**0.5
    weights = ns.get("weights")
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (n, n):
        return False, f"`weights` should be the softmax of the masked scores, a ({n}, {n}) table."
    weights = weights.float()
    nan_rows = [i for i in range(n) if torch.isnan(weights[i]).any()]
    if nan_rows:
        return False, (
            f"Row {nan_rows[0]} of the weights is NaN: the mask hides every key from that query, its own "
            "position included. Hide only the keys strictly after it."
        )
    ones = torch.ones(n, n, dtype=torch.bool)
    expected = _softmax_hiding(scores, ones.triu(1))
    if torch.allclose(weights, expected, atol=1e-5):
        out = ns.get("out")
        if not isinstance(out, torch.Tensor) or out.shape != (n, v.shape[-1]) or torch.isnan(out).any():
            return False, f"The weights are right; keep `out` as their weighted sum of the value rows, ({n}, {d})."
        if not torch.allclose(out.float(), expected @ v, atol=1e-5):
            return False, "The weights are right, but `out` is not their weighted sum of the value rows."
        return True, ""
    if torch.allclose(weights, torch.softmax(scores, dim=-1), atol=1e-5):
        return False, (
            f"The program's weights are not masked: the first token still spreads its weight over all {n} tokens. "
            "Keep the line that applies `future` to the scores."
        )
    upper = ones.triu(1)
    if torch.all(weights[upper].abs() < 1e-6) and not torch.allclose(weights.sum(dim=-1), torch.ones(n), atol=1e-4):
        return False, (
            "The future gets no weight, but the rows no longer add up to one: hide the scores before the softmax, "
            "not the weights after it."
        )
    return False, (
        "`weights` is not the softmax of the masked scores. Keep the line that computes it as the starter has it."
    )


def check(ns, probed=None):
    if not probed:
        return False, "causal_mask was not called on fresh sizes: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    ok, message = _program(ns)
    if not ok:
        return False, message
    sizes = ", ".join(str(call.args[0]) for call in probed)
    return True, (
        f"causal_mask is right for {sizes} tokens, sizes your program never asked for. In the sentence the first "
        "token now keeps all its weight for itself and the last spreads it over all six: each row sees only its "
        "own past, and the heat map shows an empty upper triangle."
    )

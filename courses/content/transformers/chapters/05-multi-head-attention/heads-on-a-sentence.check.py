import torch
from groundup import MultiHeadAttention, TokenEmbedding, Vocab, sinusoidal_positions, split_words

_PROJECTIONS = ("q_proj", "k_proj", "v_proj")


def _maps(x, state, n_heads):
    """Each head's causal attention map, recomputed from the layer's own weights."""
    batch, n, d = x.shape

    def project(name):
        t = x @ state[f"{name}.weight"].float().T + state[f"{name}.bias"].float()
        return t.reshape(batch, n, n_heads, d // n_heads).transpose(1, 2)

    q, k = project("q_proj"), project("k_proj")
    scores = q @ k.transpose(-2, -1) / (d // n_heads) ** 0.5
    hidden = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)[0]


def _starter_layer():
    """The input and the layer's weights as the starter code makes them: the same sentence, seed and
    sharpened queries."""
    torch.manual_seed(3)
    tokens = split_words("the cat sat on the mat because it was tired")
    vocab = Vocab(tokens)
    n, d_model = len(tokens), 16
    x = TokenEmbedding(len(vocab), d_model)(vocab.encode(tokens)) + sinusoidal_positions(n, d_model)
    x = x.detach()[None]
    mha = MultiHeadAttention(d_model, 4)
    with torch.no_grad():
        mha.q_proj.weight.mul_(4)
    return x, mha.state_dict()


def check(ns):
    mha, x, maps, n_heads, tokens = ns.get("mha"), ns.get("x"), ns.get("maps"), ns.get("n_heads"), ns.get("tokens")
    state = mha.state_dict() if hasattr(mha, "state_dict") else {}
    if any(f"{name}.{part}" not in state for name in _PROJECTIONS for part in ("weight", "bias")):
        return False, "Keep `mha` as the starter code builds it: a MultiHeadAttention from groundup."
    d = state["q_proj.weight"].shape[1]
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[0] != 1 or x.shape[-1] != d:
        return False, f"Keep `x` as it was: one sentence of token vectors of width {d}, shape (1, tokens, {d})."
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 2 or d % n_heads:
        return False, f"Keep `n_heads` as it was: a number of heads that divides the width {d}."
    n = x.shape[1]
    if not isinstance(maps, torch.Tensor) or maps.dim() != 3:
        return False, f"`maps` should hold one map per head: a ({n_heads}, {n}, {n}) tensor."
    if tuple(maps.shape) != (n_heads, n, n):
        return False, (
            f"`maps` has the shape {tuple(maps.shape)}; the figure needs ({n_heads}, {n}, {n}), one map per head. "
            "The maps of `mha.weights` carry a batch axis in front."
        )
    if torch.isnan(maps).any():
        return False, "`maps` holds NaN. Take the maps from `mha.weights` as they are."
    # The sentence and the weights are the starter's: a layer whose heads all agree (zeroed query
    # weights, say) would make the averaged maps right.
    x0, state0 = _starter_layer()
    same = all(torch.equal(state[name].float(), state0[name].float()) for name in state0 if name in state)
    if x.shape != x0.shape or not torch.allclose(x.float(), x0, atol=1e-6) or not same or n_heads != 4:
        return False, (
            "Keep the sentence, `x`, `n_heads` and the layer as the starter code makes them, seed and sharpened "
            "queries included: the check works the maps out from the same numbers. Only `maps` needs to change."
        )
    expected = _maps(x.float(), state, n_heads)
    maps = maps.float()
    if torch.allclose(maps, expected, atol=1e-5):
        words = tokens if isinstance(tokens, list) and len(tokens) == n else [str(j) for j in range(n)]
        picks = [words[int(expected[h, -1].argmax())] for h in range(n_heads)]
        return True, (
            f"Each panel now shows its own head. From the last token, the heads put most weight on "
            f"{', '.join(repr(p) for p in picks)}: the same sentence read {n_heads} ways, for the parameters of one "
            "wide head."
        )
    if torch.allclose(maps, expected.mean(dim=0, keepdim=True).expand_as(expected), atol=1e-5):
        return False, (
            "Every panel shows the same map: the average of the heads. Averaging hides what each head does; "
            "keep the head axis instead."
        )
    if torch.allclose(maps, expected.transpose(-2, -1), atol=1e-5):
        return False, "The maps are transposed: rows should be queries and columns keys, as `mha.weights` stores them."
    return False, "`maps` does not hold the heads' attention maps. Take them from `mha.weights`, one per head."

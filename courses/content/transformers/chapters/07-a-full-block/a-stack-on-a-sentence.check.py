import torch
from groundup import TinyGPT


def _whole(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(V, P, d, L):
    """The stack's parameters, worked out here: token table (shared with the output), position
    table, per block attention 4d^2 + 4d, feed-forward 8d^2 + 5d, two norms 2d each; final norm."""
    return V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d


def _stream_norms(ns, model):
    """Rebuild the sentence's stack from its weights and return the stream's length per depth."""
    ids, n_heads = ns.get("ids"), ns.get("n_heads")
    state = model.state_dict() if hasattr(model, "state_dict") else {}
    if "tokens.table" not in state or not isinstance(ids, torch.Tensor) or ids.dim() != 2:
        return None
    vocab_size, d_model = state["tokens.table"].shape
    n_layers = len({key.split(".")[1] for key in state if key.startswith("blocks.")})
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d_model % n_heads:
        return None
    rebuilt = TinyGPT(vocab_size, d_model, n_heads, n_layers, state["positions"].shape[0])
    rebuilt.load_state_dict({name: t.float() for name, t in state.items()})
    with torch.no_grad():
        x = rebuilt.embed(ids.long())
        out = [x[0].norm(dim=-1)]
        for block in rebuilt.blocks:
            x = block(x)
            out.append(x[0].norm(dim=-1))
    return torch.stack(out)


def _sizes(call):
    V, P, d, L = call.args if call.args else (call.kwargs[k] for k in ("V", "P", "d", "L"))
    return V, P, d, L


def _judge(call):
    V, P, d, L = _sizes(call)
    where = f"count(V={V:,}, P={P:,}, d={d:,}, L={L})"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, f"{where} stopped: {error}. Work the count out from the sizes alone."
        if "defines no function" in error:
            return False, f"{where}: {error}. Keep count a def at the top level of your code, under that name."
        return False, f"{where} raised an error: {error}"
    got = _whole(call.value)
    want = _count(V, P, d, L)
    if got is None:
        return False, f"{where} returned {call.value!r}; it should return a whole number of parameters, {want:,}."
    if got == want:
        return True, ""
    said = {
        want + V * d: (
            f"That counts the output layer as a second {V:,} by {d} table. The stack scores the next token with "
            "the token table itself (weight tying), so those numbers are already counted."
        ),
        want - P * d: f"The position table is missing: {P:,} learned rows of width {d}.",
        want - 2 * d: f"The final layer norm before the output is missing: a gain and a shift of width {d}.",
        want - L * 4 * d: "The two norms inside each block are missing: a gain and a shift each, 4d per block.",
        want
        - L * 9 * d: "The biases are missing: 4d in attention's four projections and 5d in the feed-forward block.",
    }.get(got, "")
    return False, f"{where} returned {got:,}; the stack has {want:,}. {said}".rstrip()


def check(ns, probed=None):
    if not probed:
        return False, "count was not called on fresh sizes: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    # GPT-2 small's published sizes: vocabulary, positions, width, blocks.
    V, P, d, L = 50257, 1024, 768, 12
    answer = _whole(ns.get("by_formula"))
    if answer is None:
        return False, "`by_formula` should be a whole number: the parameters of the stack, worked out by hand."
    expected = _count(V, P, d, L)
    if answer != expected:
        if answer == expected + V * d:
            return False, (
                f"{answer:,} counts the output layer as a second {V:,} by {d} table. This stack reuses the token "
                f"table to score the next token (weight tying), so those {V * d:,} numbers are already counted."
            )
        if answer == expected - P * d:
            return False, f"{answer:,} leaves out the position table: {P:,} learned rows of width {d}."
        if answer == expected - 2 * d:
            return (
                False,
                f"{answer:,} leaves out the final layer norm before the output: a gain and a shift of width {d}.",
            )
        return False, (
            f"{answer:,} is not GPT-2 small's count. Work through the stack piece by piece: tables, blocks, final "
            "norm; the printed count of the small stack tells you when the formula is right."
        )
    norms, model = ns.get("norms"), ns.get("model")
    expected_norms = _stream_norms(ns, model)
    if expected_norms is None:
        return False, "The count is right. Keep the sentence, `ids`, `n_heads` and `model` as the starter builds them."
    if not isinstance(norms, torch.Tensor) or norms.shape != expected_norms.shape or torch.isnan(norms).any():
        return (
            False,
            f"The count is right. Keep `norms` as the loop builds it, {tuple(expected_norms.shape)}: depth by token.",
        )
    if not torch.allclose(norms.float(), expected_norms, atol=1e-4):
        return False, "The count is right, but `norms` does not follow the stream through the blocks; keep that loop."
    mean = expected_norms.mean(dim=1)
    return True, (
        f"count is right on {len(probed)} stacks it had never seen, and gives {expected:,} parameters for GPT-2 "
        "small, its published 124M to the last digit. On the sentence, the stream's "
        f"mean length goes from {mean[0]:.2f} after the embedding to {mean[-1]:.2f} after block {len(mean) - 1}: "
        "every block adds to it, none rescales it."
    )

import copy
import math

import torch
from groundup import TinyGPT, cached_step, causal_mask, merge_heads, split_heads


def _rebuild(ns):
    """The learner's model rebuilt here from its weights; None when they are not a TinyGPT's."""
    model, n_heads = ns.get("model"), ns.get("n_heads")
    state = model.state_dict() if hasattr(model, "state_dict") else {}
    if "tokens.table" not in state or "positions" not in state:
        return None
    vocab_size, d_model = state["tokens.table"].shape
    n_layers = len({key.split(".")[1] for key in state if key.startswith("blocks.")})
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d_model % n_heads:
        return None
    rebuilt = TinyGPT(vocab_size, d_model, n_heads, n_layers, state["positions"].shape[0])
    rebuilt.load_state_dict({name: t.float() for name, t in state.items()})
    return rebuilt.eval()


def _cached_logits(model, ids, n_prompt, mistake):
    """Logits of a one-token-at-a-time cached decode over ids, done right (mistake None) or with
    a mistake worth naming: 'first key' (the one query masked as if it sat at position 0) or
    'position zero' (every new token given the first position's row)."""
    keys, values, out = [None] * len(model.blocks), [None] * len(model.blocks), []
    for t in range(ids.shape[1] - 1):
        row = 0 if mistake == "position zero" else t
        x = model.tokens(ids[:, t : t + 1]) + model.positions[row : row + 1]
        for i, block in enumerate(model.blocks):
            a = block.attn
            h = block.norm1(x)
            q, k, v = (split_heads(proj(h), a.n_heads) for proj in (a.q_proj, a.k_proj, a.v_proj))
            keys[i] = k if keys[i] is None else torch.cat([keys[i], k], dim=2)
            values[i] = v if values[i] is None else torch.cat([values[i], v], dim=2)
            scores = q @ keys[i].transpose(-2, -1) / k.shape[-1] ** 0.5
            if mistake == "first key":
                scores = scores.masked_fill(causal_mask(t + 1)[:1], float("-inf"))
            x = x + a.out_proj(merge_heads(torch.softmax(scores, dim=-1) @ values[i]))
            x = x + block.ffn(block.norm2(x))
        if t >= n_prompt - 1:
            out.append(model.head(x)[0, -1])
    return torch.stack(out)


def _times(value, n):
    if not isinstance(value, (list, tuple)) or len(value) != n:
        return None
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in value):
        return None
    # A CPU clock can read 0 for a very short step, never below 0.
    return [float(t) for t in value] if all(t >= 0 for t in value) and sum(value) > 0 else None


def _variant(model, ids, cache, mistake):
    """cached_step with a mistake worth naming, on a copy of the cache: 'first rows' (the new
    queries get the causal mask's first rows), 'no mask', 'position zero', 'cache ignored'."""
    cache = copy.deepcopy(cache)
    if mistake == "cache ignored":
        cache.keys, cache.values = [], []
    start, m = len(cache), ids.shape[-1]
    row = 0 if mistake == "position zero" else start
    x = model.tokens(ids) + model.positions[row : row + m]
    for i, block in enumerate(model.blocks):
        a = block.attn
        h = block.norm1(x)
        q, k, v = (split_heads(proj(h), a.n_heads) for proj in (a.q_proj, a.k_proj, a.v_proj))
        if i < len(cache.keys):
            k, v = torch.cat([cache.keys[i], k], dim=2), torch.cat([cache.values[i], v], dim=2)
            cache.keys[i], cache.values[i] = k, v
        else:
            cache.keys.append(k)
            cache.values.append(v)
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
        if mistake != "no mask":
            rows = causal_mask(start + m)[:m] if mistake == "first rows" else causal_mask(start + m)[start:]
            scores = scores.masked_fill(rows, float("-inf"))
        x = x + a.out_proj(merge_heads(torch.softmax(scores, dim=-1) @ v))
        x = x + block.ffn(block.norm2(x))
    return model.head(x)


_SAID = {
    "first rows": (
        "The new queries get the causal mask's first rows, the rows of positions 0, 1, ...: with one new token, "
        "it sees only the first key. The new tokens sit at positions len(cache) onwards; which rows belong to them?"
    ),
    "no mask": (
        "Nothing is hidden: with several new tokens, each one sees the new tokens after it. Only a single new "
        "token can do without a mask."
    ),
    "position zero": "The new tokens get the first position rows; they sit at the positions after the cached ones.",
    "cache ignored": (
        "The logits do not depend on the keys and values already in the cache: a step must attend over them, "
        "not recompute or drop them."
    ),
}


def _probed(probed):
    """'' when cached_step gave the right logits on every probe call, else the message."""
    # Copied in one go, so two calls that share a cache still share it, and the calls themselves
    # stay as they came (the reference below moves each cache on).
    copies = copy.deepcopy([call.args for call in probed])
    with torch.no_grad():
        for n, (call, (model, ids, cache)) in enumerate(zip(probed, copies, strict=True), start=1):
            where = (
                f"cached_step on call {n} ({ids.shape[1]} new token(s) after {len(cache)} cached, batch {ids.shape[0]})"
            )
            before = copy.deepcopy(cache)
            right = cached_step(model, ids, cache)  # the check's own copy of the cache moves on, in order
            if call.error:
                if "defines no function" in call.error:
                    return f"{where}: {call.error}. Keep it under its name at the top level of your code."
                return f"{where} raised an error: {call.error}"
            got = call.value
            if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(right.shape):
                shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
                return f"{where} returned {shape}; it should return logits of shape {tuple(right.shape)}."
            if torch.allclose(got.float(), right, atol=1e-4):
                continue
            for mistake, said in _SAID.items():
                if torch.allclose(got.float(), _variant(model, ids, before, mistake), atol=1e-4):
                    return f"{where} gave other logits than attending over the cache. {said}"
            if n == 3:
                return (
                    f"{where} gave other logits, although the step before it with the same cache was right: did that "
                    "step append its keys and values to the cache?"
                )
            return f"{where} gave other logits than attending over the cache and the new tokens."
    return ""


def check(ns, probed=None):
    if not probed:
        return False, "cached_step was not called on fresh inputs: run your program to the end without an error."
    said = _probed(probed)
    if said:
        return False, said
    return _check_run(ns)


def _check_run(ns):
    model = _rebuild(ns)
    if model is None:
        return False, "Keep `model` and `n_heads` as the starter code builds them: Part 7's TinyGPT."
    prompt, ids_cached, ids_recompute = ns.get("prompt"), ns.get("ids_cached"), ns.get("ids_recompute")
    if not isinstance(prompt, torch.Tensor) or prompt.dim() != 2 or prompt.shape[0] != 1 or prompt.shape[1] < 1:
        return False, "Keep `prompt` as it was: a batch of one sequence of token ids, shape (1, n)."
    n_prompt = prompt.shape[1]
    for name, ids in (("ids_recompute", ids_recompute), ("ids_cached", ids_cached)):
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[0] != 1 or ids.shape[1] <= n_prompt:
            return False, f"`{name}` should be the prompt followed by the generated tokens, shape (1, n)."
        if not torch.equal(ids[:, :n_prompt].long(), prompt.long()):
            return False, f"`{name}` should start with the prompt."
    if ids_cached.shape[1] > model.positions.shape[0]:
        return False, "`ids_cached` is longer than the model has positions for; keep `n_new` as it was."
    n_new = ids_cached.shape[1] - n_prompt
    vocab_size = model.tokens.table.shape[0]
    logits_cached = ns.get("logits_cached")
    if not isinstance(logits_cached, torch.Tensor) or logits_cached.shape != (n_new, vocab_size):
        return False, f"Keep `logits_cached` as the loop stacks it: one row of {vocab_size} scores per generated token."
    if torch.isnan(logits_cached).any():
        return False, "`logits_cached` holds NaN: a row of scores where every key was hidden, or a division by zero."
    ids_cached = ids_cached.long()
    with torch.no_grad():
        # Recomputed here from scratch: what the model says after each prefix of the cached text.
        expected = model(ids_cached[:, :-1])[0, n_prompt - 1 :]
        atol = 1e-5 * max(1.0, expected.abs().max().item())  # float32 rounding, relative to the largest score
        if not torch.allclose(logits_cached.float(), expected, atol=atol):
            for mistake, hint in (
                (
                    "first key",
                    "The cached scores differ from a full recompute because the new token's query sees only the first "
                    "key in the cache. A causal mask built for a whole sequence hides everything after position 0 from "
                    "row 0; here the one query is the newest position, so which keys lie in its future?",
                ),
                (
                    "position zero",
                    "Every new token gets the first position's row. The token fed in step t sits at position t, "
                    "which is how many positions the cache already holds.",
                ),
            ):
                wrong = _cached_logits(model, ids_cached, n_prompt, mistake)
                if torch.allclose(logits_cached.float(), wrong, atol=atol):
                    return False, hint
            return False, (
                "The cached logits differ from running the whole sequence again. Each step should compute the new "
                "token's query, key and value, append the key and value to the cache, and attend over all of it."
            )
        difference = (logits_cached.float() - expected).abs().max().item()
        greedy = ids_cached[0, n_prompt:]
        if not torch.equal(greedy, expected.argmax(dim=-1)):
            return False, "The logits are right, but `ids_cached` should append the highest-scoring token each step."
        if not torch.equal(ids_recompute.long(), ids_cached):
            return False, "`ids_recompute` should hold the same greedy tokens as the cached run: keep its loop."
    times_recompute, times_cached = _times(ns.get("times_recompute"), n_new), _times(ns.get("times_cached"), n_new)
    if times_recompute is None or times_cached is None:
        return False, (
            f"The cache is right. Keep `times_recompute` and `times_cached` as the loops fill them: {n_new} "
            "times in milliseconds each, one per generated token."
        )
    # Timings are reported, never judged: on a shared machine they vary from run to run.
    late_recompute, late_cached = sum(times_recompute[-20:]) / 20, sum(times_cached[-20:]) / 20
    early_recompute = sum(times_recompute[:20]) / 20
    return True, (
        f"Cached decoding gives the same {n_new} rows of scores as recomputing (largest difference {difference:.1g}, "
        "rounding). In your run a token "
        f"took {early_recompute:.1f} ms to recompute at the start and {late_recompute:.1f} ms at the end, against "
        f"{late_cached:.1f} ms with the cache ({late_recompute / max(late_cached, 1e-3):.1f} times as fast). Recomputing costs more "
        "at every position; a cached step costs about the same at all of them."
    )

"""Judges sample_next and generate on the probe's fresh inputs. The right shares of every row are
worked out here, in float64, from each call's own arguments; counted draws must follow them, every
drawn token must be one the filters keep, a seeded call made twice must give the same tokens, and
every token generate writes must be one the model allows on the last max_len tokens before it.
The first call that fails is shown with its small input."""

import torch

SLACK = 0.04  # counted shares may stray this far: about five standard deviations at 4,000 draws
TIE = 1e-4  # float32 rounding between two ways of computing the same logits


def _number(x: float, digits: int = 2) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 2) -> str:
    if t.dim() == 0:
        return _number(float(t), digits)
    return "[" + ", ".join(_show(x, digits) for x in t) + "]"


def _keep_top_k(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits >= kth


def _keep_top_p(logits, p, slack=0.0):
    """Tokens whose more likely tokens hold less than p (ties of the last kept score stay too)."""
    probs = torch.softmax(logits, dim=-1)
    above = ((logits[..., None, :] > logits[..., :, None]) * probs[..., None, :]).sum(dim=-1)
    return above < p + slack


def _shares(logits, temperature, top_k, top_p, order="right"):
    """The right shares in float64; `order` makes the mistakes the check names."""
    z = logits.double()
    if order == "after softmax":  # dividing probabilities changes nothing once they are renormalised
        z = z.clone()
    elif order != "filters first":
        z = z / temperature
    keep = torch.ones_like(z, dtype=torch.bool)
    if top_k is not None:
        keep &= _keep_top_k(z, top_k)
    if top_p is not None:
        keep &= _keep_top_p(z.masked_fill(~keep, float("-inf")), top_p)
    if order == "filters first":
        z = z / temperature
    return torch.softmax(z.masked_fill(~keep, float("-inf")), dim=-1)


def _settings(kwargs) -> str:
    parts = [f"{name}={kwargs[name]}" for name in ("temperature", "top_k", "top_p") if kwargs.get(name) is not None]
    if kwargs.get("generator") is not None:
        parts.append(f"a generator seeded with {kwargs['generator'].initial_seed()}")
    if "use_cache" in kwargs:
        parts.append(f"use_cache={kwargs['use_cache']}")
    return ", ".join(parts)


def _error(where, error):
    if "is not available here" in error:
        return (
            f"{where} stopped: {error}. Draw a uniform number with torch.rand and walk the running total of the shares."
        )
    if "defines no function" in error:
        return f"{where}: {error}. Define it with def at the top level of your code, under that name."
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your functions are called again in a fresh run that keeps only your imports, "
            "functions, classes and plain constants; compute anything else inside them."
        )
    return f"{where} raised an error: {error}"


def _tokens(where, value, shape, vocab):
    """(tensor, None) when value is a tensor of token ids of that shape, else (None, message)."""
    if value is None:
        return None, f"{where} returned nothing yet: write its body."
    if not isinstance(value, torch.Tensor):
        return None, f"{where} returned a {type(value).__name__}; it should return a tensor of token ids."
    if tuple(value.shape) != tuple(shape):
        return None, f"{where} returned shape {tuple(value.shape)}; it should be {tuple(shape)}, one id per row."
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        return (
            None,
            f"{where} returned {str(value.dtype).removeprefix('torch.')}; token ids are whole numbers (torch.long).",
        )
    if value.numel() and (value.min() < 0 or value.max() >= vocab):
        return None, f"{where} returned {int(value.max())}, outside the vocabulary of {vocab} tokens."
    return value.long(), None


def _judge_sample(call):
    (logits,) = call.args
    kw = call.kwargs
    temperature, top_k, top_p = kw.get("temperature", 1.0), kw.get("top_k"), kw.get("top_p")
    rows = logits.reshape(-1, logits.shape[-1])
    counted = rows.shape[0] >= 1000 and bool((rows == rows[0]).all())
    shown = _show(rows[0]) + (f" repeated {rows.shape[0]:,} times" if counted else "") if counted else _show(logits)
    where = f"sample_next on {shown} with {_settings(kw)}"
    if call.error:
        return _error(where, call.error)
    got, problem = _tokens(where, call.value, logits.shape[:-1], logits.shape[-1])
    if problem:
        return problem
    if temperature == 0:
        right = logits.argmax(dim=-1)
        if not torch.equal(got, right):
            return f"{where} gave {_show(got)}; with temperature 0 it should be the argmax of each row, {_show(right)}."
        return ""
    shares = _shares(logits, temperature, top_k, top_p)
    flat, flat_shares = got.reshape(-1), shares.reshape(-1, shares.shape[-1])
    outside = flat_shares[torch.arange(len(flat)), flat] == 0
    if outside.any():
        i = int(outside.nonzero()[0])
        kept = [j for j, s in enumerate(flat_shares[i].tolist()) if s > 0]
        return (
            f"{where} drew token {int(flat[i])}, which the filters drop: only {kept} may be drawn. Apply the temperature "
            "first, then top_k_filter and top_p_filter, and draw from what is left."
        )
    if not counted:
        return ""
    freq = torch.bincount(flat, minlength=logits.shape[-1]).double() / len(flat)
    right = shares.reshape(-1, shares.shape[-1])[0]
    if (freq - right).abs().max() <= SLACK:
        return ""
    said = f"{where} drew the tokens with shares {_show(freq)}; the right shares are {_show(right)}."
    if (freq - _shares(rows[0], temperature, top_k, top_p, "after softmax")).abs().max() <= SLACK:
        return (
            f"{said} Yours are the shares at temperature 1: a temperature applied to the probabilities after the "
            "softmax, or not at all, is undone when they are renormalised. Divide the scores before the softmax."
        )
    if (freq - _shares(rows[0], temperature, top_k, top_p, "filters first")).abs().max() <= SLACK:
        return f"{said} The filters ran before the temperature; divide the scores first, then filter."
    return f"{said} Each token should come up as often as its share of the tempered, filtered row."


def _judge_generate(call, context):
    model, ids, n_new = call.args
    kw = call.kwargs
    temperature, top_k, top_p = kw.get("temperature", 1.0), kw.get("top_k"), kw.get("top_p")
    max_len = model.positions.shape[0]
    batch, n = ids.shape
    vocab = model.tokens.table.shape[0]
    where = (
        f"generate on a model with max_len={max_len}, the prompt {ids.tolist()} and n_new={n_new}, with {_settings(kw)}"
    )
    if call.error:
        if any(word in call.error for word in ("size of tensor", "out of range", "positions", "must match")):
            return (
                f"{_error(where, call.error)}. The model has {max_len} positions: at every step, give it only the last "
                f"{max_len} tokens, and once the text is longer than that the cache cannot grow any more."
            )
        return _error(where, call.error)
    got, problem = _tokens(where, call.value, (batch, n + n_new), vocab)
    if problem:
        return problem
    if not torch.equal(got[:, :n], ids):
        return f"{where} returned {got.tolist()}, which does not start with the prompt."
    with torch.no_grad():
        for t in range(n_new):
            window = got[:, : n + t][:, -max_len:]
            logits = model(window)[:, -1] / (temperature or 1.0)
            chosen = logits.gather(1, got[:, n + t, None])[:, 0]
            if temperature == 0:
                ok = chosen >= logits.max(dim=-1).values - TIE
                rule = "the highest score"
            elif top_k is not None:
                ok = chosen >= logits.topk(top_k, dim=-1).values[:, -1] - TIE
                rule = f"among the {top_k} highest scores"
            elif top_p is not None:
                ok = _keep_top_p(logits.double(), top_p, slack=TIE).gather(1, got[:, n + t, None])[:, 0]
                rule = f"inside the nucleus of p={top_p}"
            else:
                continue
            if not ok.all():
                b = int((~ok).nonzero()[0])
                cropped = " (the last max_len tokens)" if n + t > max_len else ""
                return (
                    f"{where} gave {got.tolist()}. Token {n + t} of row {b} is {int(got[b, n + t])}, but on the tokens "
                    f"before it{cropped}, {window[b].tolist()}, the model's choice must be {rule}. Feed the model the last "
                    f"{max_len} tokens at each step, and take the logits of the last position."
                )
    key = (id(model), ids.numel(), tuple(ids.flatten().tolist()), n_new, temperature, top_k, top_p)
    if kw.get("generator") is not None:
        key += (kw["generator"].initial_seed(),)
    if kw.get("generator") is not None or temperature == 0:
        first = context.setdefault(key, (got, kw.get("use_cache")))
        if not torch.equal(first[0], got):
            how = "with and without the cache" if first[1] != kw.get("use_cache") else "twice"
            return (
                f"{where} gave {got.tolist()}, but the same call {how} gave {first[0].tolist()}. Pass the generator to "
                "sample_next, and let the cache and the recompute feed the model the same tokens at the same positions."
            )
    return ""


def check(ns, probed=None):
    if not probed:
        return (
            False,
            "sample_next and generate were not called on fresh inputs: run your program to the end without an error.",
        )
    seen = {}
    for call in probed:
        if call.function == "sample_next":
            message = _judge_sample(call)
            if not message and call.kwargs.get("generator") is not None and not call.error:
                key = (
                    tuple(call.args[0].shape),
                    tuple(call.args[0].flatten()[:8].tolist()),
                    call.kwargs["generator"].initial_seed(),
                )
                first = seen.setdefault(key, call.value)
                if not torch.equal(first, call.value):
                    message = (
                        f"sample_next with {_settings(call.kwargs)} gave different tokens on two calls with the same "
                        "seed. Draw every random number from the generator you are given: torch.rand(..., generator=generator)."
                    )
        else:
            message = _judge_generate(call, seen)
        if message:
            return False, message
    return True, (
        f"sample_next and generate are right on {len(probed)} calls they had never seen: the draws follow the "
        "tempered, filtered shares, a seed repeats them exactly, and generate keeps to the model's last max_len "
        "tokens, with the cache and without it."
    )

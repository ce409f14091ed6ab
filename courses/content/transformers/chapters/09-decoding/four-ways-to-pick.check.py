"""Judges top_k_filter and top_p_filter on the probe's fresh rows: which tokens each keeps is
worked out here, in float64, from the call's own arguments; a kept score must come back as it
was and a dropped one as -inf. The first call that differs is shown with its row."""

import torch


def _number(x: float) -> str:
    if x == float("-inf"):
        return "-inf"
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t) -> str:
    if t.dim() == 0:
        return _number(float(t))
    return "[" + ", ".join(_show(x) for x in t) + "]"


def _keep_top_k(logits, k):
    return logits >= logits.topk(k, dim=-1).values[..., -1:]


def _keep_top_p(logits, p, *, mistake=None):
    """Kept tokens: those whose more likely tokens hold less than p. `mistake` makes the usual
    wrong ones: 'crossing' also drops the token that carries the total past p."""
    probs = torch.softmax(logits.double(), dim=-1)
    above = ((logits[..., None, :] > logits[..., :, None]) * probs[..., None, :]).sum(dim=-1)
    if mistake == "crossing":
        return above + probs <= p
    return above < p


def _judge(call):
    logits, cut = call.args
    name = call.function
    where = f"{name}({_show(logits)}, {cut})"
    if call.error:
        if "is not available here" in call.error:
            return f"{where} stopped: {call.error}."
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the function under its name at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(logits.shape):
        kind = (
            "nothing"
            if got is None
            else (f"shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"a {type(got).__name__}")
        )
        return f"{where} returned {kind}; it should return the scores, shape {tuple(logits.shape)}, with the dropped ones set to -inf."
    keep = _keep_top_k(logits, cut) if name == "top_k_filter" else _keep_top_p(logits, cut)
    right = logits.masked_fill(~keep, float("-inf"))
    got_kept = got > float("-inf")
    if torch.equal(got_kept, keep) and torch.allclose(got[keep].double(), logits[keep].double()):
        return ""
    said = f"{where} gave {_show(got)}; the right answer is {_show(right)}."
    if name == "top_p_filter":
        if torch.equal(got_kept, _keep_top_p(logits, cut, mistake="crossing") & (logits > float("-inf"))):
            return (
                f"{said} The token that carries the running total past p was dropped: a nucleus must reach p, so "
                "decide about each token from what the tokens ranked above it already hold."
            )
        if (got_kept & ~keep).any():
            return f"{said} It keeps more tokens than needed: stop at the first token that brings the total to p."
    else:
        counts, wanted = got_kept.sum(dim=-1), keep.sum(dim=-1)
        if bool((counts <= cut).all()) and bool((wanted > cut).any()):
            return (
                f"{said} This row has a tie at its highest score number {cut}: keep every score equal to it, since "
                "which of two equal tokens to drop is not ours to decide."
            )
    if torch.equal(got_kept, keep):
        return f"{said} The right tokens are kept, but their scores should come back unchanged."
    return said


def check(ns, probed=None):
    if not probed:
        return (
            False,
            "top_k_filter and top_p_filter were not called on fresh rows: run your program to the end without an error.",
        )
    for call in probed:
        message = _judge(call)
        if message:
            return False, message
    held = ns.get("probs_top_p")
    logits = ns.get("logits")
    extra = ""
    if isinstance(held, torch.Tensor) and isinstance(logits, torch.Tensor) and held.shape == logits.shape:
        probs = torch.softmax(logits.double(), dim=-1)
        extra = f" On the chapter's row your nucleus keeps {int((held > 0).sum())} words, which held {probs[held > 0].sum():.3f}."
    return True, (
        f"Both filters are right on {len(probed)} rows they had never seen: the nucleus always reaches p, keeping the "
        "token that carries the total past it and never more, and top-k keeps every score tied with the k-th." + extra
    )

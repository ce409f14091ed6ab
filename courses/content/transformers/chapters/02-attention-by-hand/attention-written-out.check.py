"""Judges attention on the probe's fresh inputs: the right output and weights are worked out
here, in float64, from each call's own arguments, and the first call that differs is shown to the
learner with its numbers when it is small enough to read."""

import math

import torch

ATOL = RTOL = 2e-5
# A call this small (q, k and v together) is printed in full in a message.
PRINTABLE = 24


def _attend(q, k, v, causal, *, scale=None, hide="future", when="before", axis=-1, transpose=False):
    """Attention in float64 over any leading axes, right by default; the keyword arguments make the
    mistakes the check recognises (a scale other than sqrt(d), the wrong triangle, the mask after
    the softmax, a softmax down the columns, the scores transposed)."""
    q, k, v = q.double(), k.double(), v.double()
    n_q, n_k = q.shape[-2], k.shape[-2]
    if transpose and n_q != n_k:
        return None
    scores = (k @ q.transpose(-2, -1) if transpose else q @ k.transpose(-2, -1)) / (
        math.sqrt(q.shape[-1]) if scale is None else scale
    )
    ones = torch.ones(n_q, n_k, dtype=torch.bool)
    hidden = ones.triu(1) if hide == "future" else ones.tril(-1)
    if causal and when == "before":
        scores = scores.masked_fill(hidden, float("-inf"))
    weights = torch.softmax(scores, dim=axis)
    if causal and when == "after":
        weights = weights.masked_fill(hidden, 0.0)
    return weights @ v, weights


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 0:
        return _number(float(t), digits)
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _input(call) -> str:
    q, k, v, causal = call.args
    shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, causal={causal}"
    if q.numel() + k.numel() + v.numel() <= PRINTABLE:
        return f"q = {_show(q)}, k = {_show(k)}, v = {_show(v)}, causal={causal}"
    return shapes


def _both(got, want) -> tuple[str, str]:
    """The learner's tensor and the right one, with as many decimals as it takes to tell them apart."""
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want) -> bool:
    return (
        want is not None and got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))
    )


def _attend_each(q, k, v, causal):
    """Attention computed sequence by sequence, the leading axes flattened: what a correct function
    gives; used to tell a mistake that only a batch shows."""
    lead = q.shape[:-2]
    q2, k2, v2 = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))
    outs = [_attend(a, b, c, causal)[0] for a, b, c in zip(q2, k2, v2, strict=True)]
    return torch.stack(outs).reshape(*lead, q.shape[-2], v.shape[-1])


def _diagnosis(call, out) -> str:
    """What the learner's output matches, among the usual mistakes (empty: none of them)."""
    q, k, v, causal = call.args
    n_q, d, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    mistakes = [
        (
            dict(scale=1.0),
            "That is attention without the scale: divide the scores by the square root of the key width first.",
        ),
        (dict(scale=float(d)), f"The scores are divided by the key width, {d}; divide by its square root instead."),
    ]
    if d_v != d:
        mistakes.append(
            (
                dict(scale=math.sqrt(d_v)),
                "The scores are divided by the square root of the value width; the scale comes from the width "
                "of the queries and keys.",
            )
        )
    if causal:
        mistakes += [
            (dict(hide="past"), "The mask is on the wrong side: it hides each query's past and leaves its future."),
            (
                dict(when="after"),
                "The future gets no weight, but the rows no longer add up to one: hide the scores before the "
                "softmax, not the weights after it.",
            ),
        ]
    mistakes += [
        (
            dict(axis=-2),
            "The softmax runs down the columns. Each query's shares, one row, should add up to one.",
        ),
        (dict(transpose=True), "The scores are transposed: row i should score query i against every key."),
    ]
    for kwargs, said in mistakes:
        wrong = _attend(q, k, v, causal, **kwargs)
        if wrong is not None and _close(out, wrong[0]):
            return said
    if causal and _close(out, _attend(q, k, v, False)[0]):
        return "That is attention with no mask: with causal=True each query must not see the keys after it."
    if not causal and n_q > 1 and _close(out, _attend(q, k, v, True)[0]):
        return "That output is masked although causal=False: without the mask every query sees every key."
    if q.dim() > 2:
        return (
            "This call has leading batch axes, and each sequence of the batch should be attended on its own: "
            "transpose only the last two axes of k, and take the softmax along the last axis."
        )
    return ""


def _where(index) -> str:
    """'row 2' for a single sequence, 'row 2 of sequence (1, 0)' for one in a batch."""
    *lead, row = index
    if not lead:
        return f"row {row}"
    return f"row {row} of sequence {tuple(lead) if len(lead) > 1 else lead[0]}"


def _judge(call):
    """(ok, message) for one call."""
    where = f"attention on {_input(call)}"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, (
                f"{where} stopped: {error}. Build the softmax from torch.exp, a sum and a division, and the "
                "attention from matrix products."
            )
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Define it with def at the top level of your code, under that name: your "
                "function is called again in a fresh run that keeps only your imports, functions, classes and "
                "plain constants, so a name given by an assignment (name = another_function) is not there."
            )
        if "asks you to write" in error or "cannot import name 'attention'" in error:
            return False, (
                f"{where}: {error}. This exercise asks you to write attention yourself, so groundup's own is not "
                "there when your function is judged."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. Your function is called again in a fresh run that keeps only your "
                "imports, functions, classes and plain constants (such as D = 8); compute anything else inside "
                "the function."
            )
        if q_batched(call) and ("size" in error or "shape" in error or "must match" in error):
            return False, (
                f"{where} raised {error}. With leading batch axes, transpose only the last two axes of k "
                "(k.T reverses them all), and build the mask from the last two sizes of the scores."
            )
        return False, f"{where} raised an error: {error}"
    q, k, v, causal = call.args
    n_q, n_k, d_v, lead = q.shape[-2], k.shape[-2], v.shape[-1], tuple(q.shape[:-2])
    want_out, want_weights = lead + (n_q, d_v), lead + (n_q, n_k)
    result = call.value
    if not isinstance(result, tuple | list) or len(result) != 2:
        kind = "nothing yet: write its body" if result is None else f"a {type(result).__name__}"
        return False, (
            f"{where} returned {kind}. It should return two tensors, the output, {want_out}, and then "
            f"the weights, {want_weights}."
        )
    out, weights = (_tensor(x) for x in result)
    if out is None or weights is None:
        return False, f"{where} returned something other than two tensors: the output and the weights."
    if tuple(out.shape) != want_out or tuple(weights.shape) != want_weights:
        return False, (
            f"{where} returned an output of shape {tuple(out.shape)} and weights of shape "
            f"{tuple(weights.shape)}; they should be {want_out} and {want_weights}: the leading axes as they "
            "came in, then one row per query, one column per value feature and per key."
        )
    if not (out.is_floating_point() and weights.is_floating_point()):
        kinds = sorted({str(t.dtype).removeprefix("torch.") for t in (out, weights)})
        return False, (
            f"{where} returned tensors of {' and '.join(kinds)}; the output and the weights should hold real "
            "floating-point numbers, such as float32."
        )
    right_out, right_weights = _attend(q, k, v, causal)
    broken = torch.isnan(out).any(dim=-1) | torch.isinf(out).any(dim=-1) | torch.isnan(weights).any(dim=-1)
    if broken.any():
        first = tuple(int(i) for i in broken.nonzero()[0])
        scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
        if scores.max() > 88:
            return False, (
                f"{where} gave NaN or infinity in {_where(first)}. Its largest score is {scores.max():.0f}, and "
                "exp of anything above about 88 overflows a float32. Subtract each row's largest score before "
                "exp: the shares stay the same and the largest term becomes exp(0) = 1."
            )
        rows = broken.reshape(-1, n_q)
        if causal and n_q > 1 and bool(rows[:, 0].all()) and not bool(rows[:, 1:].any()):
            return False, (
                f"{where} gave NaN in row 0: the mask hides every key from the first query, its own included. "
                "A query may always see itself; hide only the keys strictly after it."
            )
        return False, (
            f"{where} gave NaN or infinity in {_where(first)}; the right output there is {_show(right_out[first])}."
        )
    if _close(out, right_out) and _close(weights, right_weights):
        return True, ""
    if _close(out, right_out):
        if weights.numel() > 16:
            return False, f"{where} gave the right output, but not the weights that make it."
        got, want = _both(weights, right_weights)
        return False, f"{where} gave the right output but the weights {got}; the weights that make it are {want}."
    readable = q.numel() + k.numel() + v.numel() <= PRINTABLE
    if readable:
        got, want = _both(out, right_out)
        shown = f"{where} gave {got}; the right output is {want}."
    else:
        bad = (~torch.isclose(out.double(), right_out, atol=ATOL, rtol=RTOL)).any(dim=-1)
        first = tuple(int(i) for i in bad.nonzero()[0])
        got, want = _both(out[first], right_out[first])
        shown = f"{where} differs in {_where(first)}: {got} where the right output has {want}."
    said = _diagnosis(call, out)
    if said:
        return False, f"{shown} {said}"
    sums = weights.double().sum(dim=-1)
    off = (sums - 1).abs()
    if bool((off > 1e-4).any()):
        first = tuple(int(i) for i in (off == off.max()).nonzero()[0])
        return False, (
            f"{shown} {_where(first).capitalize()} of your weights adds up to {float(sums[first]):.3f}; every row "
            "should add up to 1."
        )
    ahead = weights.double().abs() * torch.ones(n_q, n_k).triu(1)
    if causal and bool((ahead > 1e-6).any()):
        *_, i, j = (int(x) for x in (ahead > 1e-6).nonzero()[0])
        return False, f"{shown} Query {i} gives weight to key {j}, which comes after it."
    return False, shown


def q_batched(call) -> bool:
    return isinstance(call.args[0], torch.Tensor) and call.args[0].dim() > 2


def check(ns, probed=None):
    if not probed:
        return False, "attention was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    longest = max(call.args[1].shape[-2] for call in probed)
    return True, (
        f"attention is right on {len(probed)} inputs it had never seen: sequences of 1 to {longest} tokens, alone "
        "and in batches with one or two leading axes, with and without the mask, fewer queries than keys, and "
        "scores in the hundreds, where a plain exp would overflow. Every row of its weights adds up to one, and "
        "no query looks ahead. Part 5 runs its heads through this function."
    )

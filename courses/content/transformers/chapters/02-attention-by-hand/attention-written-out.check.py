"""Judges masked_attention on the probe's fresh inputs: the right output and weights are worked out
here, in float64, from each call's own arguments, and the first call that differs is shown to the
learner with its numbers when it is small enough to read."""

import math

import torch

ATOL = RTOL = 2e-5
# A call this small (q, k and v together) is printed in full in a message.
PRINTABLE = 24


def _attend(q, k, v, causal, *, scale=None, hide="future", when="before", axis=-1, transpose=False):
    """Attention in float64, right by default; the keyword arguments make the mistakes the check
    recognises (a scale other than sqrt(d), the wrong triangle, the mask after the softmax, a
    softmax down the columns, the scores transposed)."""
    q, k, v = q.double(), k.double(), v.double()
    n = q.shape[0]
    scores = (k @ q.T if transpose else q @ k.T) / (math.sqrt(q.shape[1]) if scale is None else scale)
    ones = torch.ones(n, n, dtype=torch.bool)
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
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))


def _diagnosis(call, out) -> str:
    """What the learner's output matches, among the usual mistakes (empty: none of them)."""
    q, k, v, causal = call.args
    n, d, d_v = q.shape[0], q.shape[1], v.shape[1]
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
            dict(axis=0),
            "The softmax runs down the columns. Each query's shares, one row, should add up to one.",
        ),
        (dict(transpose=True), "The scores are transposed: row i should score query i against every key."),
    ]
    for kwargs, said in mistakes:
        if _close(out, _attend(q, k, v, causal, **kwargs)[0]):
            return said
    if causal and _close(out, _attend(q, k, v, False)[0]):
        return "That is attention with no mask: with causal=True each query must not see the keys after it."
    if not causal and n > 1 and _close(out, _attend(q, k, v, True)[0]):
        return "That output is masked although causal=False: without the mask every query sees every key."
    return ""


def _judge(call):
    """(ok, message) for one call."""
    where = f"masked_attention on {_input(call)}"
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
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. Your function is called again in a fresh run that keeps only your "
                "imports, functions, classes and plain constants (such as D = 8); compute anything else inside "
                "the function."
            )
        return False, f"{where} raised an error: {error}"
    q, k, v, causal = call.args
    n, d_v = q.shape[0], v.shape[1]
    result = call.value
    if not isinstance(result, tuple | list) or len(result) != 2:
        kind = "nothing yet: write its body" if result is None else f"a {type(result).__name__}"
        return False, (
            f"{where} returned {kind}. It should return two tensors, the output, ({n}, {d_v}), and then "
            f"the weights, ({n}, {n})."
        )
    out, weights = (_tensor(x) for x in result)
    if out is None or weights is None:
        return False, f"{where} returned something other than two tensors: the output and the weights."
    if tuple(out.shape) != (n, d_v) or tuple(weights.shape) != (n, n):
        return False, (
            f"{where} returned an output of shape {tuple(out.shape)} and weights of shape "
            f"{tuple(weights.shape)}; they should be ({n}, {d_v}) and ({n}, {n}): one row per query, one "
            "column per value feature and per key."
        )
    if not (out.is_floating_point() and weights.is_floating_point()):
        kinds = sorted({str(t.dtype).removeprefix("torch.") for t in (out, weights)})
        return False, (
            f"{where} returned tensors of {' and '.join(kinds)}; the output and the weights should hold real "
            "floating-point numbers, such as float32."
        )
    right_out, right_weights = _attend(q, k, v, causal)
    broken = torch.isnan(out).any(dim=1) | torch.isinf(out).any(dim=1) | torch.isnan(weights).any(dim=1)
    if broken.any():
        rows = [int(i) for i in broken.nonzero().flatten()]
        scores = q.double() @ k.double().T / math.sqrt(q.shape[1])
        if scores.max() > 88:
            return False, (
                f"{where} gave NaN or infinity in row {rows[0]}. Its largest score is {scores.max():.0f}, and exp "
                "of anything above about 88 overflows a float32. Subtract each row's largest score before exp: "
                "the shares stay the same and the largest term becomes exp(0) = 1."
            )
        if causal and rows == [0] and n > 1:
            return False, (
                f"{where} gave NaN in row 0: the mask hides every key from the first query, its own included. "
                "A query may always see itself; hide only the keys strictly after it."
            )
        return False, (
            f"{where} gave NaN or infinity in row {rows[0]}; the right output there is {_show(right_out[rows[0]])}."
        )
    if _close(out, right_out) and _close(weights, right_weights):
        return True, ""
    if _close(out, right_out):
        if n > 4:
            return False, f"{where} gave the right output, but not the weights that make it."
        got, want = _both(weights, right_weights)
        return False, f"{where} gave the right output but the weights {got}; the weights that make it are {want}."
    readable = q.numel() + k.numel() + v.numel() <= PRINTABLE
    if readable:
        got, want = _both(out, right_out)
        shown = f"{where} gave {got}; the right output is {want}."
    else:
        row = int((~torch.isclose(out.double(), right_out, atol=ATOL, rtol=RTOL)).any(dim=1).nonzero()[0])
        got, want = _both(out[row], right_out[row])
        shown = f"{where} differs in row {row}: {got} where the right output has {want}."
    said = _diagnosis(call, out)
    if said:
        return False, f"{shown} {said}"
    sums = weights.double().sum(dim=1)
    if not torch.allclose(sums, torch.ones(n, dtype=torch.float64), atol=1e-4):
        row = int((sums - 1).abs().argmax())
        return False, f"{shown} Row {row} of your weights adds up to {sums[row]:.3f}; every row should add up to 1."
    if causal and n > 1 and (weights.double().triu(1).abs() > 1e-6).any():
        i, j = (int(x) for x in (weights.double().triu(1).abs() > 1e-6).nonzero()[0])
        return False, f"{shown} Query {i} gives weight to key {j}, which comes after it."
    return False, shown


def check(ns, probed=None):
    if not probed:
        return False, "masked_attention was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    shapes = sorted({(call.args[0].shape[0], call.args[0].shape[1], call.args[2].shape[1]) for call in probed})
    return True, (
        f"masked_attention is right on {len(probed)} inputs it had never seen, sequences of 1 to "
        f"{max(s[0] for s in shapes)} tokens, with and without the mask, and on scores in the hundreds, where a "
        "plain exp would overflow. Every row of its weights adds up to one, and no query looks ahead."
    )

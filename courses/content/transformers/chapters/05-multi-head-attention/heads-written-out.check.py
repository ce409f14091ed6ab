"""Judges split_heads, merge_heads and multi_head_attention on the probe's fresh inputs: the right
results are worked out here (the layer in float64, from the projections' own weights), and the
first call that differs is shown with its numbers when it is small enough to read, with the
usual mistakes named."""

import math

import torch

ATOL = RTOL = 1e-5
PRINTABLE = 16  # a tensor this small is printed in full in a message
FUNCTIONS = ("split_heads", "merge_heads", "multi_head_attention")


def _split(x, h, *, transpose=True, interleave=False):
    """Right by default; the keywords make two mistakes: no transpose (the rows of consecutive
    tokens cut into "heads"), and heads that take every h-th column instead of a block."""
    *lead, n, d = x.shape
    if not transpose:
        return x.reshape(*lead, h, n, d // h)
    if interleave:
        return x.reshape(*lead, n, d // h, h).transpose(-1, -2).transpose(-3, -2)
    return x.reshape(*lead, n, h, d // h).transpose(-3, -2)


def _merge(x, *, transpose=True, interleave=False):
    *lead, h, n, d_head = x.shape
    if not transpose:
        return x.reshape(*lead, n, h * d_head)
    if interleave:
        return x.transpose(-3, -2).transpose(-1, -2).reshape(*lead, n, h * d_head)
    return x.transpose(-3, -2).reshape(*lead, n, h * d_head)


def _project(layer, x):
    return x @ layer.weight.double().T + layer.bias.double()


def _layer(x, q_proj, k_proj, v_proj, out_proj, h, causal=True, *, split=None, merge=None, shared=False, mix=True):
    """The layer in float64, right by default; the keywords make the mistakes the check names."""
    split = split or _split
    merge = merge or _merge
    x = x.double()
    q = split(_project(q_proj, x), h)
    k = split(_project(q_proj if shared else k_proj, x), h)
    v = split(_project(q_proj if shared else v_proj, x), h)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = scores.shape[-1]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    joined = merge(weights @ v)
    return (_project(out_proj, joined) if mix else joined), weights


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 0:
        return _number(float(t), digits)
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _both(got, want) -> tuple[str, str]:
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _input(call) -> str:
    if call.function == "multi_head_attention":
        x, *_, h = call.args
        return f"x {tuple(x.shape)}, n_heads={h}, causal={call.kwargs.get('causal', True)} (four random projections)"
    x = call.args[0]
    shown = _show(x) if x.numel() <= PRINTABLE else str(tuple(x.shape))
    return f"x = {shown}, n_heads={call.args[1]}" if call.function == "split_heads" else f"x = {shown}"


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want.double(), atol=ATOL, rtol=RTOL))


def _place(index) -> str:
    *lead, row = index
    return f"row {row}" if not lead else f"row {row} of {tuple(lead) if len(lead) > 1 else lead[0]}"


def _differs(where, got, want) -> str:
    if want.numel() <= PRINTABLE:
        mine, right = _both(got, want)
        return f"{where} gave {mine}; the right result is {right}."
    bad = (~torch.isclose(got.double(), want.double(), atol=ATOL, rtol=RTOL)).any(dim=-1)
    first = tuple(int(i) for i in bad.nonzero()[0])
    mine, right = _both(got[first], want[first])
    return f"{where} differs in {_place(first)}: {mine} where the right result has {right}."


def _error(where, function, error) -> str:
    if "is not available here" in error:
        return (
            f"{where} stopped: {error}. Split the heads, attend and join them with your own functions and "
            "groundup's attention."
        )
    if "asks you to write" in error or ("cannot import name" in error and "groundup" in error):
        return (
            f"{where}: {error}. This exercise asks you to write split_heads, merge_heads and multi_head_attention "
            "yourself, so groundup's own are not there when your functions are judged."
        )
    if "defines no function" in error:
        return (
            f"{where}: {error}. Define it with def at the top level of your code, under that name: your functions "
            "are called again in a fresh run that keeps only your imports, functions, classes and plain constants."
        )
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your functions are called again in a fresh run that keeps only your imports, "
            "functions, classes and plain constants; compute everything else from the arguments."
        )
    if "not enough values to unpack" in error or "too many values to unpack" in error or "shape" in error:
        return (
            f"{where} raised {error}. The input may have any number of leading axes, or none: take the sizes "
            "you need from the end of x.shape and keep whatever comes before them."
        )
    return f"{where} raised an error: {error}"


def _judge_reshape(call):
    where = f"{call.function} on {_input(call)}"
    x = call.args[0]
    if call.function == "split_heads":
        h = call.args[1]
        want = _split(x, h)
        mistakes = [
            (
                _split(x, h, transpose=False),
                "The rows were cut into heads without the transpose: each 'head' now holds whole rows of "
                "neighbouring tokens, so attention would mix positions. Cut each row into pieces first, then move "
                "the head axis in front of the token axis.",
            ),
            (
                _split(x, h, interleave=True),
                "Each head takes every n_heads-th column; head h should own one block of d_head neighbouring columns.",
            ),
        ]
    else:
        want = _merge(x)
        mistakes = [
            (
                _merge(x, transpose=False),
                "The heads were joined without the transpose back: the rows mix tokens. Move the token axis in "
                "front of the head axis again before joining each token's pieces.",
            ),
            (
                _merge(x, interleave=True),
                "The pieces are joined column by column across the heads; each token's row should hold head 0's "
                "columns first, then head 1's, and so on.",
            ),
        ]
    got = _tensor(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}. It should return a tensor of shape {tuple(want.shape)}."
    if tuple(got.shape) != tuple(want.shape):
        return False, f"{where} returned shape {tuple(got.shape)}; it should be {tuple(want.shape)}."
    if _close(got, want):
        return True, ""
    shown = _differs(where, got, want)
    for wrong, said in mistakes:
        if _close(got, wrong):
            return False, f"{shown} {said}"
    return False, shown


def _judge_layer(call):
    where = f"multi_head_attention on {_input(call)}"
    x, *projections, h = call.args
    causal = call.kwargs.get("causal", True)
    want_out, want_weights = _layer(x, *projections, h, causal)
    result = call.value
    if not isinstance(result, tuple | list) or len(result) != 2:
        kind = "nothing yet: write its body" if result is None else f"a {type(result).__name__}"
        return False, (
            f"{where} returned {kind}. It should return two tensors: the output, {tuple(want_out.shape)}, and "
            f"the heads' weights, {tuple(want_weights.shape)}."
        )
    out, weights = (_tensor(t) for t in result)
    if out is None or weights is None:
        return False, f"{where} returned something other than two tensors: the output and the weights."
    if tuple(out.shape) != tuple(want_out.shape) or tuple(weights.shape) != tuple(want_weights.shape):
        return False, (
            f"{where} returned an output of shape {tuple(out.shape)} and weights of shape {tuple(weights.shape)}; "
            f"they should be {tuple(want_out.shape)} and {tuple(want_weights.shape)}: one map per head, the head "
            "axis after the leading axes."
        )
    if torch.isnan(out).any() or torch.isnan(weights).any():
        return False, f"{where} gave NaN. Check the mask: each query must still see itself."
    if _close(out, want_out) and _close(weights, want_weights):
        return True, ""
    if _close(out, want_out):
        return False, f"{where} gave the right output, but the weights are not the heads' maps that make it."
    shown = _differs(where, out, want_out)
    mistakes = [
        (
            dict(split=lambda t, n: _split(t, n, transpose=False)),
            "The heads were split without the transpose, so each head mixes the rows of different tokens.",
        ),
        (
            dict(merge=lambda t: _merge(t, transpose=False)),
            "The heads were joined without the transpose back, so each output row mixes tokens.",
        ),
        (dict(shared=True), "Keys and values come from q_proj too: each role has its own projection."),
        (dict(mix=False), "The heads are joined but never mixed: out_proj should finish the layer."),
        (
            dict(causal=not causal),
            "The mask is off although causal=True." if causal else "The output is masked although causal=False.",
        ),
    ]
    for kwargs, said in mistakes:
        kwargs = {"causal": causal, **kwargs}
        wrong, _ = _layer(x, *projections, h, **kwargs)
        if _close(out, wrong):
            return False, f"{shown} {said}"
    return False, shown


def _judge(call):
    if call.error:
        return False, _error(f"{call.function} on {_input(call)}", call.function, call.error)
    return _judge_layer(call) if call.function == "multi_head_attention" else _judge_reshape(call)


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    failures, counts = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            ok, message = _judge(call)
            if not ok:
                failures[call.function] = message
    for name in FUNCTIONS:
        if name in failures:
            right = [f for f in FUNCTIONS if f in counts and f not in failures]
            verb = "is right on all its inputs" if len(right) == 1 else "are right on all their inputs"
            said = f"{' and '.join(right)} {verb}. " if right else ""
            return False, said + failures[name]
    return True, (
        f"split_heads, merge_heads and multi_head_attention are right on {len(probed)} inputs they had never seen: "
        "no batch axis, one or two, from one head to four, with and without the mask. From here on "
        "groundup's MultiHeadAttention runs on your functions."
    )

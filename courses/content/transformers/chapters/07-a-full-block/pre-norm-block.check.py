"""Judges pre_norm_block on the probe's fresh pieces and streams: the right output is worked out
here, in float64, from each call's own arguments, and the first call that differs is shown with
its input, next to what the usual wrong arrangements would give."""

import copy

import torch

ATOL = RTOL = 1e-4


def _double(module):
    return copy.deepcopy(module).double()


def _arrangements(x, norm1, attn, norm2, ffn):
    """The right block first, then the wrong arrangements the check recognises, each with what to
    say about it."""

    def right():
        h = x + attn(norm1(x), causal=True)
        return h + ffn(norm2(h))

    def post_norm():
        h = norm1(x + attn(x, causal=True))
        return norm2(h + ffn(h))

    def norm_after_add():
        h = norm1(x + attn(norm1(x), causal=True))
        return norm2(h + ffn(norm2(h)))

    def normed_stream():
        a = norm1(x)
        h = a + attn(a, causal=True)
        b = norm2(h)
        return b + ffn(b)

    def no_mask():
        h = x + attn(norm1(x), causal=False)
        return h + ffn(norm2(h))

    def no_attention_residual():
        h = attn(norm1(x), causal=True)
        return h + ffn(norm2(h))

    def no_ffn_residual():
        return ffn(norm2(x + attn(norm1(x), causal=True)))

    def ffn_reads_x():
        return x + attn(norm1(x), causal=True) + ffn(norm2(x))

    def swapped():
        h = x + attn(norm2(x), causal=True)
        return h + ffn(norm1(h))

    def one_norm():
        h = x + attn(norm1(x), causal=True)
        return h + ffn(norm1(h))

    return [
        (right, ""),
        (
            post_norm,
            "That is post-norm: the sums are normalised and each sublayer reads the raw stream. Pre-norm "
            "normalises only the copy a sublayer reads, and adds the result to the stream as it was.",
        ),
        (
            norm_after_add,
            "Each sublayer reads a normalised copy, but the sum is normalised again after the addition: "
            "the stream itself must never be normalised inside the block.",
        ),
        (
            normed_stream,
            "The normalised copy replaces the stream before each addition: add the sublayer's result to the "
            "stream itself, not to its normalised copy.",
        ),
        (
            no_mask,
            "Attention sees the future: call it with causal=True, so no token reads the ones after it.",
        ),
        (
            no_attention_residual,
            "Attention's output replaces the stream instead of adding to it: keep the residual connection, "
            "x plus attention's result.",
        ),
        (
            no_ffn_residual,
            "The feed-forward block's output replaces the stream instead of adding to it: add it to h.",
        ),
        (
            ffn_reads_x,
            "The feed-forward block reads norm2 of x; it should read norm2 of h, the stream after attention "
            "has added to it.",
        ),
        (swapped, "The norms are swapped: norm1 goes before attention, norm2 before the feed-forward block."),
        (one_norm, "norm1 is used twice: the feed-forward block reads norm2 of h, with its own gain and shift."),
    ]


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(v, digits) for v in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _input(call) -> str:
    x, norm1, attn, norm2, ffn = call.args
    batch, n, d = x.shape
    kinds = f"{type(norm1).__name__}s, {type(attn).__name__} with {attn.n_heads} head{'s' if attn.n_heads > 1 else ''}, {type(ffn).__name__}"
    if x.numel() <= 12:
        return f"x = {_show(x[0])} (1 sequence of {n} tokens of width {d}; {kinds}, weights drawn at random)"
    return f"x of shape {tuple(x.shape)} ({kinds}, weights drawn at random)"


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))


def _judge(call):
    where = f"pre_norm_block on {_input(call)}"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, f"{where} stopped: {error}. Build the block from the four pieces it is given."
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Keep it a def at the top level of your code, under that name: your function is "
                "called again in a fresh run that keeps only your imports, functions, classes and constants."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. Your function is called again in a fresh run that keeps only your "
                "imports, functions, classes and plain constants: use only its arguments."
            )
        return False, f"{where} raised an error: {error}"
    x = call.args[0]
    got = _tensor(call.value)
    if got is None:
        kind = "nothing" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}; it should return the stream after the block, shape {tuple(x.shape)}."
    if tuple(got.shape) != tuple(x.shape):
        return False, f"{where} returned shape {tuple(got.shape)}; a block keeps the stream's shape, {tuple(x.shape)}."
    if torch.isnan(got).any() or torch.isinf(got).any():
        return False, f"{where} gave NaN or infinity. Build the output only from x and the four pieces."
    pieces = [_double(m) for m in call.args[1:]]
    with torch.no_grad():
        outcomes = [(make(), said) for make, said in _arrangements(x.double(), *pieces)]
    want = outcomes[0][0]
    if _close(got, want):
        return True, ""
    flat_got, flat_want = got.double().reshape(-1, x.shape[-1]), want.reshape(-1, x.shape[-1])
    row = int((~torch.isclose(flat_got, flat_want, atol=ATOL, rtol=RTOL)).any(dim=1).nonzero()[0])
    shown = (
        f"{where} differs at token {row % x.shape[1]} of sequence {row // x.shape[1]}: {_show(flat_got[row])} where "
        f"the right output has {_show(flat_want[row])}."
    )
    for value, said in outcomes[1:]:
        if _close(got, value):
            return False, f"{shown} {said}"
    return False, shown


def check(ns, probed=None):
    if not probed:
        return False, "pre_norm_block was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    return True, (
        f"pre_norm_block is right on {len(probed)} blocks it had never seen, with layer norm and RMSNorm, GELU and "
        "SwiGLU, plain and rotary attention, from one token to a batch of three sequences. Each sublayer reads a "
        "normalised copy and adds to the stream, so the stream itself is never rescaled; groundup's Block now "
        "runs on your function."
    )

"""Judges rotary_attention and Block on the probe's fresh calls: rotary attention is worked out here,
in float64, from each call's own weights and stream, and the block's parameters are compared, name
by name, with the ones each choice of options builds."""

import copy

import torch
from groundup import attention, merge_heads, rotate, split_heads

ATOL = RTOL = 1e-4


def _rotary(x, attn, causal, *, turn="qk", before_split=False, on_input=False):
    """Rotary attention in float64, right by default; the keyword arguments make the mistakes the
    check recognises (which of q, k, v are turned, turning before the heads are split, turning the
    input instead of the projections)."""
    attn = copy.deepcopy(attn).double()
    x = x.double()
    h = attn.n_heads
    source = rotate(x) if on_input else x
    projected = [proj(source) for proj in (attn.q_proj, attn.k_proj, attn.v_proj)]
    if before_split:
        projected = [rotate(p) if name in turn else p for name, p in zip("qkv", projected, strict=True)]
    q, k, v = (split_heads(p, h) for p in projected)
    if not before_split and not on_input:
        q, k, v = (rotate(t) if name in turn else t for name, t in zip("qkv", (q, k, v), strict=True))
    heads, _ = attention(q, k, v, causal=causal)
    return attn.out_proj(merge_heads(heads))


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(_number(v, digits) for v in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want) -> bool:
    return got.shape == want.shape and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))


def _error(where, error):
    if "is not available here" in error:
        return f"{where} stopped: {error}. Build it from the pieces the starter imports."
    if "defines no function" in error:
        return (
            f"{where}: {error}. Keep it at the top level of your code, under that name: your code is run again "
            "in a fresh process that keeps only your imports, functions, classes and plain constants."
        )
    return f"{where} raised an error: {error}"


def _judge_attention(call):
    x, attn = call.args
    causal = call.kwargs.get("causal", True)
    batch, n, d = x.shape
    heads = f"{attn.n_heads} head{'s' if attn.n_heads > 1 else ''}"
    if x.numel() <= 8:
        where = f"rotary_attention on x = {_show(x[0])}, {heads}, causal={causal} (weights drawn at random)"
    else:
        where = f"rotary_attention on x of shape {tuple(x.shape)}, {heads}, causal={causal} (weights drawn at random)"
    if call.error:
        return False, _error(where, call.error)
    got = _tensor(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}. It should return the output, shape {tuple(x.shape)}."
    if tuple(got.shape) != tuple(x.shape):
        return False, f"{where} returned shape {tuple(got.shape)}; it should be {tuple(x.shape)}, the shape of x."
    if torch.isnan(got).any() or torch.isinf(got).any():
        return False, f"{where} gave NaN or infinity."
    with torch.no_grad():
        want = _rotary(x, attn, causal)
        if _close(got, want):
            return True, ""
        flat_got, flat_want = got.double().reshape(-1, d), want.reshape(-1, d)
        row = int((~torch.isclose(flat_got, flat_want, atol=ATOL, rtol=RTOL)).any(dim=1).nonzero()[0])
        shown = (
            f"{where} differs at token {row % n} of sequence {row // n}: {_show(flat_got[row])} where the right "
            f"output has {_show(flat_want[row])}."
        )
        mistakes = [
            (dict(turn=""), "Nothing is turned: that is plain attention. Turn the queries and keys with rotate."),
            (dict(turn="q"), "Only the queries are turned; turn the keys too, so their dot product sees distance."),
            (dict(turn="k"), "Only the keys are turned; turn the queries too, so their dot product sees distance."),
            (dict(turn="qkv"), "The values are turned as well; rotary embeddings turn only the queries and the keys."),
            (
                dict(before_split=True),
                "The queries and keys are turned before the heads are split: rotate works on each head's rows, "
                "with frequencies for the head's width, so split first.",
            ),
            (
                dict(on_input=True),
                "x itself is turned before the projections; turn the projected queries and keys of each head.",
            ),
            (dict(causal=not causal), f"The mask does not follow causal={causal}: pass causal on to attention."),
        ]
        for kwargs, said in mistakes:
            kwargs = {"causal": causal, **kwargs}
            if n > 1 and _close(got, _rotary(x, attn, **kwargs)):
                return False, f"{shown} {said}"
    return False, shown


def _expected(d, n_heads, hidden=None, ffn="gelu", norm="layer", rotary=False):
    """{name: shape} of the parameters a Block with these options has, in order."""
    shapes = {"norm1.weight": (d,)} | ({"norm1.bias": (d,)} if norm == "layer" else {})
    for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
        shapes |= {f"attn.{proj}.weight": (d, d), f"attn.{proj}.bias": (d,)}
    shapes |= {"norm2.weight": (d,)} | ({"norm2.bias": (d,)} if norm == "layer" else {})
    if ffn == "gelu":
        wide = hidden or 4 * d
        shapes |= {
            "ffn.expand.weight": (wide, d),
            "ffn.expand.bias": (wide,),
            "ffn.contract.weight": (d, wide),
            "ffn.contract.bias": (d,),
        }
    else:
        wide = hidden or round(8 * d / 3)
        shapes |= {"ffn.gate.weight": (wide, d), "ffn.up.weight": (wide, d), "ffn.down.weight": (d, wide)}
    return shapes


def _judge_block(call):
    options = ", ".join([str(a) for a in call.args] + [f"{k}={v!r}" for k, v in call.kwargs.items()])
    where = f"Block({options})"
    bad = {k: v for k, v in call.kwargs.items() if (k, v) in (("norm", "batch"), ("ffn", "relu"))}
    if bad:
        (option, value), choices = next(iter(bad.items())), {"norm": ("layer", "rms"), "ffn": ("gelu", "swiglu")}
        wanted = choices[option]
        if not call.error:
            return (
                False,
                f"{where} built a block; an unknown {option} should raise ValueError naming {' and '.join(wanted)}.",
            )
        if not call.error.startswith("ValueError") or not all(choice in call.error for choice in wanted):
            return False, (
                f"{where} raised {call.error}; it should raise ValueError with a message that names the choices, "
                f"{' and '.join(repr(c) for c in wanted)}."
            )
        return True, ""
    if call.error:
        return False, _error(where, call.error)
    block = call.value
    state = block.state_dict() if hasattr(block, "state_dict") else None
    if state is None:
        return False, f"{where} made {type(block).__name__}: keep Block an nn.Module class, as the starter has it."
    expected = _expected(*call.args, **call.kwargs)
    if not state:
        return False, f"{where} has no parameters yet: write its __init__, creating norm1, attn, norm2 and ffn."
    missing = [name for name in expected if name not in state]
    extra = [name for name in state if name not in expected]
    if missing or extra:
        said = f"{where} should have {', '.join(missing)}" if missing else where
        said += f"{' and' if missing else ''} has {', '.join(extra)}, which it should not" if extra else ""
        hint = "Check which norm and feed-forward block each option builds, and their names: norm1, attn, norm2, ffn."
        return False, f"{said}. {hint}"
    for name, shape in expected.items():
        if tuple(state[name].shape) != shape:
            return False, f"{where}: {name} has shape {tuple(state[name].shape)}; it should be {shape}."
    for name in ("norm1", "norm2"):
        if not torch.equal(state[f"{name}.weight"].double(), torch.ones(call.args[0], dtype=torch.float64)):
            return False, f"{where}: {name} should start as a fresh norm, its gain at ones."
    if list(state) != list(expected):
        return False, (
            f"{where} creates its parts in the order {', '.join(dict.fromkeys(k.split('.')[0] for k in state))}; "
            "create them as norm1, attn, norm2, ffn, so that the same seed gives the same weights as the course's."
        )
    return True, ""


def check(ns, probed=None):
    if not probed:
        return False, "Your code was not called on fresh inputs: run your program to the end without an error."
    counts, failures = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            ok, message = (_judge_attention if call.function == "rotary_attention" else _judge_block)(call)
            if not ok:
                failures[call.function] = message
    if failures:
        first = next(iter(failures))
        right = [name for name in counts if name not in failures]
        said = f"{right[0]} is right on all {counts[right[0]]} of its calls. " if right else ""
        return False, said + failures[first]
    return True, (
        f"rotary_attention is right on {counts['rotary_attention']} streams it had never seen, and Block builds the "
        "right parts for every option and refuses the unknown ones. TinyGPT's position='rotary', ffn='swiglu' "
        "and norm='rms' now run on your code."
    )

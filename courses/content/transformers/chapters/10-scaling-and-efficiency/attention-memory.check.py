import math

import torch
import torch.nn.functional as F
from groundup import attention_saved_bytes, saved_bytes
from torch.nn.attention import SDPBackend, sdpa_kernel

_SIZES = ("batch", "heads", "d_head")
_BIGGEST_TABLE = 64 * 2**20  # bytes: keeps the check's own measurements quick


def _measure(backend, batch, heads, d_head, n):
    """The bytes one causal attention call keeps for backward under `backend`, measured here."""
    q, k, v = (torch.randn(batch, heads, n, d_head, requires_grad=True) for _ in range(3))
    with sdpa_kernel(backend):
        return saved_bytes(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)


def _whole_list(value, length=None):
    return (
        isinstance(value, list)
        and (length is None or len(value) == length)
        and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in value)
    )


def _probed(probed):
    """'' when every probe call measured what the kernel it names keeps, else the message."""
    for call in probed:
        batch, heads, n, d_head, fused = call.args
        kernel = "fused" if fused else "MATH"
        where = f"attention_saved_bytes(batch={batch}, heads={heads}, n={n}, d_head={d_head}, fused={fused})"
        if call.error:
            if "defines no function" in call.error:
                return f"{where}: {call.error}. Keep it under its name at the top level of your code."
            return f"{where} raised an error: {call.error}"
        got = call.value
        if isinstance(got, bool) or not isinstance(got, int):
            return f"{where} returned {'nothing' if got is None else 'a ' + type(got).__name__}; it should return a number of bytes."
        right = attention_saved_bytes(*call.args)
        if got == right:
            continue
        other = attention_saved_bytes(batch, heads, n, d_head, not fused)
        if fused and got == other:
            return (
                f"{where} gave {got:,} bytes, what the MATH kernel keeps; the fused kernel keeps {right:,}. The second "
                "measurement should force the fused kernel: look at which SDPBackend names run on the CPU."
            )
        return f"{where} gave {got:,} bytes; the {kernel} kernel keeps {right:,}."
    return ""


def check(ns, probed=None):
    if not probed:
        return (
            False,
            "attention_saved_bytes was not called on fresh sizes: run your program to the end without an error.",
        )
    said = _probed(probed)
    if said:
        return False, said
    return _check_run(ns)


def _check_run(ns):
    if not all(isinstance(ns.get(name), int) and not isinstance(ns[name], bool) and ns[name] > 0 for name in _SIZES):
        return False, "Keep `batch`, `heads` and `d_head` as the starter code sets them: whole numbers above zero."
    batch, heads, d_head = (ns[name] for name in _SIZES)
    lengths = ns.get("lengths")
    if not _whole_list(lengths) or len(lengths) < 3:
        return False, "Keep `lengths` as a list of at least three sequence lengths, such as the starter's five."
    if batch * heads * max(lengths) ** 2 * 4 > _BIGGEST_TABLE or batch * heads * d_head > 4096:
        return False, "Keep the sizes small, as in the starter code: the largest n x n table should stay under 64 MB."
    math_bytes, fused_bytes = ns.get("math_bytes"), ns.get("fused_bytes")
    if not _whole_list(math_bytes, len(lengths)) or not _whole_list(fused_bytes, len(lengths)):
        return False, "`math_bytes` and `fused_bytes` should each hold one whole number of bytes per length."
    expected_math = [_measure(SDPBackend.MATH, batch, heads, d_head, n) for n in lengths]
    expected_fused = [_measure(SDPBackend.FLASH_ATTENTION, batch, heads, d_head, n) for n in lengths]
    if math_bytes != expected_math:
        return False, "`math_bytes` is not what the MATH kernel keeps. Leave the first measurement as it was."
    if fused_bytes == expected_math:
        return False, (
            "Both curves measure the MATH kernel, so they coincide. The second measurement should force the fused "
            "kernel instead: look at which SDPBackend names run on the CPU."
        )
    if fused_bytes != expected_fused:
        return (
            False,
            "`fused_bytes` is not what the fused kernel keeps. Measure it as the first, with the other backend.",
        )
    slope_math = math.log(math_bytes[-1] / math_bytes[-2]) / math.log(lengths[-1] / lengths[-2])
    slope_fused = math.log(fused_bytes[-1] / fused_bytes[-2]) / math.log(lengths[-1] / lengths[-2])
    return True, (
        f"At n = {lengths[-1]} the MATH kernel keeps {math_bytes[-1] / fused_bytes[-1]:.1f} times the bytes of the fused "
        f"one. On the log-log plot its curve bends towards slope 2 (now {slope_math:.2f}), the n x n weights; the "
        f"fused curve has slope {slope_fused:.2f}: queries, keys, values, output and one number per row."
    )

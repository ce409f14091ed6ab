import torch


def check(ns):
    n, d, pe = ns.get("n_positions"), ns.get("d_model"), ns.get("pe")
    if isinstance(n, bool) or isinstance(d, bool) or not isinstance(n, int) or not isinstance(d, int):
        return False, "Keep `n_positions` and `d_model` as whole numbers."
    if n < 2 or d < 2 or d % 2:
        return False, "`d_model` should be even (the columns come in pairs) and there should be several positions."
    if not isinstance(pe, torch.Tensor) or tuple(pe.shape) != (n, d):
        return False, f"`pe` should be a table with one row per position and one column per dimension: ({n}, {d})."
    pe = pe.float()
    if torch.isnan(pe).any():
        return False, "`pe` holds NaN. Every entry should be a sine or a cosine."
    # Recomputed here from the learner's sizes.
    angles = torch.arange(n, dtype=torch.float32)[:, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    sin, cos = torch.sin(angles), torch.cos(angles)
    even, odd = pe[:, 0::2], pe[:, 1::2]
    if torch.allclose(even, sin, atol=1e-4) and torch.allclose(odd, cos, atol=1e-4):
        return True, (
            "Every position now has its own row: at position 0 the odd columns read 1, and each pair turns at its "
            "own speed, fast on the left of the heat map and slow on the right."
        )
    if torch.allclose(even, sin, atol=1e-4) and torch.allclose(odd, sin, atol=1e-4):
        return False, (
            "The odd columns repeat the even ones, so each pair carries its angle twice and position 0 is a row of "
            "zeros. The second column of a pair should hold the other coordinate of the same angle."
        )
    if torch.allclose(even, cos, atol=1e-4) and torch.allclose(odd, sin, atol=1e-4):
        return False, "Sine and cosine are swapped: the even columns should start at 0, the odd ones at 1."
    return (
        False,
        "`pe` does not match the sinusoidal pattern. Keep the frequencies and angles as the starter code makes them.",
    )

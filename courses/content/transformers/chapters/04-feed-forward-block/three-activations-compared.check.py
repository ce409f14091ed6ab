import torch
import torch.nn.functional as F


def check(ns):
    x, answer = ns.get("x"), ns.get("negative_gelu")
    if not isinstance(x, torch.Tensor) or x.dim() != 1 or torch.isnan(x).any():
        return False, "Keep `x` as the starter code makes it: the 13 inputs from -3 to 3."
    if x.numel() < 5 or x.min() > -3 or x.max() < 3:
        return False, "Keep `x` running from -3 to 3, so that the table covers both sides of zero."
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, "`negative_gelu` should be a whole number: how many GELU values in the table are below zero."
    # Counted here with torch's own GELU on the learner's inputs, never with their table.
    expected = int((F.gelu(x.float()) < 0).sum())
    if answer == expected:
        return True, (
            f"Right: {expected}. GELU is below zero for every negative input, though at -3 only by 0.004; ReLU is "
            "never below zero. That small dip lets a unit push a signal down instead of only switching it off."
        )
    if answer == 0:
        return (
            False,
            "0 is the count for ReLU. GELU's curve behaves differently left of zero: check the signs in its column.",
        )
    return False, (
        f"{answer} is not the count. Some GELU values on the left are tiny, but a tiny value with a minus sign is "
        "still below zero."
    )

import math

import torch

GRID = torch.linspace(-3, 3, 13, dtype=torch.float64)


def check(ns):
    x, answer = ns.get("x"), ns.get("negative_gelu")
    if not isinstance(x, torch.Tensor) or x.dim() != 1 or torch.isnan(x).any():
        return False, "Keep `x` as the starter code makes it: the 13 inputs from -3 to 3."
    # The table's inputs are the starter's: other inputs (values far left, where GELU rounds to zero)
    # could make a wrong count right.
    if x.shape != GRID.shape or not torch.allclose(x.double(), GRID):
        return False, "Keep `x` as the starter code makes it: the 13 inputs from -3 to 3, in steps of 0.5."
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, "`negative_gelu` should be a whole number: how many GELU values in the table are below zero."
    # Counted here from GELU's formula, never from the learner's table or torch's GELU.
    gelu = GRID * (1 + torch.erf(GRID / math.sqrt(2))) / 2  # by its formula, in float64
    expected = int((gelu < 0).sum())
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

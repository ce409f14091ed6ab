def _count_below_zero(values):
    if hasattr(values, "tolist"):
        values = values.tolist()
    try:
        return sum(1 for v in values if float(v) < 0)
    except (TypeError, ValueError):
        return None


def check(ns):
    answer = ns.get("negative_gelu")
    if answer is None:
        return (
            False,
            "Set `negative_gelu` to the number of GELU values below zero: count them in the table or with torch.",
        )
    if hasattr(answer, "item"):
        try:
            answer = answer.item()
        except (TypeError, ValueError, RuntimeError):
            return False, "`negative_gelu` should be a single number, not a whole tensor. Add the matches up."
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, "`negative_gelu` should be a whole number: how many GELU values are below zero."
    true_count = _count_below_zero(ns.get("gelu"))
    if true_count is None:
        return False, "The table needs `gelu`, the GELU of every input. Keep the line that computes it."
    if answer == true_count:
        return True, (
            f"Right: {true_count} GELU values are below zero. ReLU has none, and the dip lets a unit push a signal "
            "down a little instead of only switching it off."
        )
    return False, (
        f"{answer} is not the number of GELU values below zero. Look again at the left half of the table: some "
        "values are tiny but still carry a minus sign."
    )

def _rows(value):
    """A square list of float rows from a tensor, an array or nested lists, or None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    try:
        rows = [[float(v) for v in row] for row in value]
    except (TypeError, ValueError):
        return None
    if not rows or any(len(row) != len(rows) for row in rows):
        return None
    return rows


def check(ns):
    if "weights" not in ns:
        return False, "There is no `weights` any more. Keep the line that applies the softmax to the scores."
    rows = _rows(ns["weights"])
    if rows is None or len(rows) < 2:
        return False, "`weights` should be a square table with one row per token, as the softmax of the scores gives."
    if any(abs(sum(row) - 1.0) > 1e-3 for row in rows):
        return (
            False,
            "Some row of `weights` does not add up to 1. Apply the softmax along the last axis, one row at a time.",
        )
    reach = rows[0][-1]
    if reach > 1e-6:
        return True, (
            f"Without the mask the first token gives {reach:.3f} of its weight to the last one, a token that "
            "comes after it. With the mask that weight was exactly zero."
        )
    return False, (
        "The first row still gives the last token a weight of exactly zero, so something still hides the future "
        "from it. Find what sets those scores before the softmax, and turn it off."
    )

import torch


def _tensor(ns, name):
    value = ns.get(name)
    return value if isinstance(value, torch.Tensor) else None


def check(ns):
    table, ids, one_hot, by_hand = (_tensor(ns, name) for name in ("table", "ids", "one_hot", "by_hand"))
    if table is None or table.dim() != 2 or ids is None or ids.dim() != 1:
        return False, "Keep `table` (one row per word) and `ids` (one id per position) as the starter code makes them."
    if ids.dtype not in (torch.int64, torch.int32) or ids.numel() == 0 or ids.min() < 0 or ids.max() >= len(table):
        return False, "`ids` should hold whole numbers that each name a row of `table`."
    n, vocab_size = len(ids), len(table)
    if one_hot is None or tuple(one_hot.shape) != (n, vocab_size):
        return (
            False,
            f"`one_hot` should be a tensor with one row per position and one column per word: ({n}, {vocab_size}).",
        )
    one_hot = one_hot.float()
    if torch.isnan(one_hot).any():
        return False, "`one_hot` holds NaN. It should hold only zeros and ones."
    if not torch.all((one_hot == 0) | (one_hot == 1)):
        return False, "`one_hot` should hold only zeros and ones."
    if torch.all(one_hot == 0):
        return False, "`one_hot` is still all zeros, so every row of `by_hand` is zero too. Each row needs one 1."
    if not torch.all(one_hot.sum(dim=1) == 1):
        return False, "Some row of `one_hot` has more or fewer than one 1. Each position gets exactly one."
    if not torch.equal(one_hot.argmax(dim=1), ids.long()):
        return (
            False,
            "Each row has one 1, but not always in the right column: row i's 1 belongs in the column that `ids[i]` names.",
        )
    expected = table[ids.long()]
    if by_hand is None or by_hand.shape != expected.shape:
        return False, "`by_hand` should be the product of `one_hot` and `table`, one row per position."
    if torch.isnan(by_hand).any() or not torch.allclose(by_hand.float(), expected.float()):
        return (
            False,
            "`one_hot` is right, but `by_hand` does not match the table's rows. Multiply `one_hot` by `table`.",
        )
    return True, (
        f"Each of the {n} one-hot rows picked one of the {vocab_size} rows of the table, exactly as F.embedding "
        "does: a lookup is a multiplication by a one-hot matrix, done without storing the zeros."
    )

def check(ns):
    hidden = ns.get("hidden")
    n_params = ns.get("n_params")
    if isinstance(hidden, bool) or not isinstance(hidden, int):
        return False, "Keep `hidden` as a whole number: the width of the block's middle layer."
    if hidden != 4:
        return False, (
            f"The hidden width is {hidden}. Set it to four, run again, and compare the parameter count and the "
            "output with this run."
        )
    if hasattr(n_params, "item"):
        n_params = n_params.item()
    if isinstance(n_params, bool) or not isinstance(n_params, int):
        return False, "`n_params` should hold the block's parameter count: add up the sizes of all its parameters."
    block = ns.get("block")
    if block is not None and hasattr(block, "parameters"):
        actual = sum(p.numel() for p in block.parameters())
        if actual != n_params:
            return False, f"`n_params` says {n_params}, but the block has {actual}. Count the parameters of this block."
    if n_params != 40:
        return False, (
            f"`n_params` is {n_params}. With a width of four on both sides, count each layer's weight matrix and "
            "its bias again."
        )
    return True, (
        "With a hidden width of 4 the block has 40 parameters, against 148 at the usual four-times width, and its "
        "output changed with them: the same shape, less room to work."
    )

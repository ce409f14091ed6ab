"""Judges parameter_count, matmul_parameters and forward_flops on the probe's fresh sizes: the
right counts are worked out here from the shapes, exactly, in whole numbers, and the usual
mistakes are named when a count matches one of them."""


def _right(name, args):
    if name == "parameter_count":
        vocab_size, d, layers, max_len = args
        return layers * (12 * d * d + 13 * d) + vocab_size * d + max_len * d + 2 * d
    if name == "matmul_parameters":
        vocab_size, d, layers = args
        return layers * 12 * d * d + vocab_size * d
    vocab_size, d, layers, batch, n = args
    return 2 * (layers * 12 * d * d + vocab_size * d) * batch * n + layers * batch * 4 * n * n * d


def _mistakes(name, args):
    """(count, what it means) for the usual wrong counts."""
    if name == "parameter_count":
        vocab_size, d, layers, max_len = args
        right = _right(name, args)
        return [
            (
                right - layers * 9 * d - d,
                "The biases are missing: every Linear in a block has one, as wide as its output.",
            ),
            (
                right - layers * 4 * d - 2 * d,
                "The LayerNorms are missing: each has a gain and a shift of width d_model.",
            ),
            (right - max_len * d, "The position table is missing: one learned row of width d_model per position."),
            (right + vocab_size * d, "The token table is counted twice: the output reuses it, so it adds nothing."),
            (
                right - layers * 6 * d * d,
                "The feed-forward block is d -> 4d -> d: each of its matrices has 4 d^2 numbers.",
            ),
        ]
    if name == "matmul_parameters":
        vocab_size, d, layers = args
        right = _right(name, args)
        return [
            (
                right - vocab_size * d,
                "The token table is missing: it scores every position at the output, a product too.",
            ),
            (right + layers * 9 * d, "The biases are in: a bias is added, never multiplied, so it has no place in N."),
            (
                right - layers * 6 * d * d,
                "The feed-forward block is d -> 4d -> d: each of its matrices has 4 d^2 numbers.",
            ),
            (4 * right, "That is the memory of training in bytes (weights, gradients and Adam's two averages), not N."),
        ]
    vocab_size, d, layers, batch, n = args
    weights = 2 * (layers * 12 * d * d + vocab_size * d) * batch * n
    attention = layers * batch * 4 * n * n * d
    return [
        (weights, "Only the products with weights are counted: add attention's scores and blend, which have none."),
        (weights // 2 + attention // 2, "Each multiply-add is two FLOPs, a multiplication and an addition."),
        (
            weights + attention // 2,
            "Attention has two products without weights, Q K^T and the blend with V; count both.",
        ),
        (weights + attention // batch, "Attention's products come once per sequence of the batch."),
        (weights + attention // layers, "Attention's products come once per layer."),
        (
            3 * (weights + attention),
            "That is a training step (forward and backward); this asks for the forward pass alone.",
        ),
    ]


_NAMES = {
    "parameter_count": "vocab_size={}, d_model={}, n_layers={}, max_len={}",
    "matmul_parameters": "vocab_size={}, d_model={}, n_layers={}",
    "forward_flops": "vocab_size={}, d_model={}, n_layers={}, batch={}, n={}",
}


def _judge(call):
    where = f"{call.function}({_NAMES[call.function].format(*call.args)})"
    if call.error:
        if "is not available here" in call.error:
            return f"{where} stopped: {call.error}. Count from the shapes: multiply the sizes, build nothing."
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the function under its name at the top level of your code."
        if "MemoryError" in call.error or "alloc" in call.error.lower():
            return f"{where} ran out of memory: a model this size cannot be built here. Count from the shapes instead."
        return f"{where} raised an error: {call.error}"
    got, right = call.value, _right(call.function, call.args)
    if got is None:
        return f"{where} returned nothing yet: write its body."
    if isinstance(got, bool) or not isinstance(got, int | float):
        return f"{where} returned a {type(got).__name__}; it should return a whole number."
    if isinstance(got, float):
        if got == right:
            return (
                f"{where} returned the float {got}; return a whole number (an int): use // or int() where you divide."
            )
        got_text = f"{got:,.1f}"
    else:
        got_text = f"{got:,}"
    if got == right:
        return ""
    said = f"{where} gave {got_text}; the right count is {right:,}."
    for count, meaning in _mistakes(call.function, call.args):
        if got == count:
            return f"{said} {meaning}"
    return said


def check(ns, probed=None):
    if not probed:
        return (
            False,
            "The three functions were not called on fresh sizes: run your program to the end without an error.",
        )
    for call in probed:
        message = _judge(call)
        if message:
            return False, message
    big = probed[-1].args
    return True, (
        f"All three counts are right on {len(probed)} sets of sizes they had never seen, from a model you can count "
        f"on paper to one of width {big[1]:,} and {big[2]} layers, with {_right('parameter_count', probed[-3].args):,} "
        "parameters, which could never be built here."
    )

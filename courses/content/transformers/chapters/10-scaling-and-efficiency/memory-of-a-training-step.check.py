"""Judges training_state_bytes, largest_trainable, attention_weights_bytes and largest_batch on the
probe's fresh sizes:
the right counts are worked out here in whole numbers, and the usual slips (a kind of number left
out, one average for AdamW, bits for bytes, a precision or an optimiser ignored, a batch that goes
below zero or is not rounded down) are named when a count matches one of them."""

AVERAGES = {"sgd": 0, "momentum": 1, "adamw": 2}
KEYS = ("weights", "gradients", "optimizer", "total")
SIGNATURES = {
    "training_state_bytes": ("n_params", "optimizer", "bytes_per_number"),
    "largest_trainable": ("memory_bytes", "optimizer", "bytes_per_number"),
    "attention_weights_bytes": ("batch", "heads", "n", "n_layers", "bytes_per_number"),
    "largest_batch": ("memory_bytes", "n_params", "n_layers", "heads", "n", "optimizer", "bytes_per_number"),
}
DEFAULTS = {"optimizer": "adamw", "bytes_per_number": 4}


def _arguments(call) -> dict:
    """The call's arguments by name, the defaults filled in."""
    names = SIGNATURES[call.function]
    given = dict(zip(names, call.args, strict=False)) | dict(call.kwargs)
    return {name: given.get(name, DEFAULTS.get(name)) for name in names}


def _state(n_params, optimizer="adamw", bytes_per_number=4, *, averages=None, gradients=True, weights=True):
    """The training state in bytes, right by default; the keyword arguments make the usual slips."""
    size = n_params * bytes_per_number
    state = (AVERAGES[optimizer] if averages is None else averages) * size
    parts = {"weights": size if weights else 0, "gradients": size if gradients else 0, "optimizer": state}
    return parts | {"total": sum(parts.values())}


def _table(batch, heads, n, n_layers, bytes_per_number=4):
    return n_layers * batch * heads * n * n * bytes_per_number


def _trainable(memory_bytes, optimizer="adamw", bytes_per_number=4):
    return memory_bytes // _state(1, optimizer, bytes_per_number)["total"]


def _largest(memory_bytes, n_params, n_layers, heads, n, optimizer="adamw", bytes_per_number=4):
    left = memory_bytes - _state(n_params, optimizer, bytes_per_number)["total"]
    return max(left, 0) // _table(1, heads, n, n_layers, bytes_per_number)


def _where(call) -> str:
    shown = [f"{v:,}" if isinstance(v, int) and abs(v) >= 10**4 else repr(v) for v in call.args]
    shown += [f"{k}={v!r}" for k, v in call.kwargs.items()]
    return f"{call.function}({', '.join(shown)})"


def _number(value) -> str:
    return f"{value:,}" if isinstance(value, int) else repr(value)


def _judge_state(call, where):
    args = _arguments(call)
    if args["optimizer"] not in AVERAGES:
        if not call.error:
            return f"{where} returned {call.value!r}; an unknown optimizer should raise ValueError naming the choices."
        if not call.error.startswith("ValueError") or not all(name in call.error for name in AVERAGES):
            return (
                f"{where} raised {call.error}; it should raise ValueError with a message that names "
                "'sgd', 'momentum' and 'adamw'."
            )
        return ""
    if call.error:
        return None
    got, right = call.value, _state(**args)
    if got is None:
        return f"{where} returned nothing yet: write its body."
    if not isinstance(got, dict) or set(got) != set(KEYS):
        keys = ", ".join(repr(k) for k in got) if isinstance(got, dict) else f"a {type(got).__name__}"
        return f"{where} returned {keys}; it should return a dict with the keys {', '.join(map(repr, KEYS))}."
    for key in KEYS:
        value = got[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{where}: {key!r} is a {type(value).__name__}; it should be a whole number of bytes."
        if value == right[key] and isinstance(value, float):
            return f"{where}: {key!r} is the float {value}; return a whole number (an int)."
    if all(got[key] == right[key] for key in KEYS):
        return ""
    wrong = next(key for key in KEYS if got[key] != right[key])
    said = f"{where} gave {wrong!r} {_number(got[wrong])}; the right count is {right[wrong]:,} bytes."
    n, optimizer, size = args["n_params"], args["optimizer"], args["bytes_per_number"]
    slips = [
        (dict(gradients=False), "The gradients are missing: training keeps one per weight, as large as the weight."),
        (
            dict(averages=0),
            f"The optimiser's state is missing: {optimizer!r} keeps {AVERAGES[optimizer]} running averages per weight.",
        ),
        (dict(averages=1), "AdamW keeps two running averages per weight, of the gradient and of its square."),
        (dict(averages=2), f"{optimizer!r} keeps {AVERAGES[optimizer]} running averages per weight, not AdamW's two."),
        (dict(weights=False), "The weights themselves are missing: they are in memory as well as their gradients."),
    ]
    for kwargs, meaning in slips:
        if got == _state(n, optimizer, size, **kwargs):
            return f"{said} {meaning}"
    if got == {key: 8 * value for key, value in right.items()}:
        return f"{said} That is bits: a number of bytes_per_number bytes holds 8 times as many bits."
    if optimizer != "adamw" and size != 4 and got == _state(n):
        return (
            f"{said} That is AdamW in float32 whatever the arguments; this call asks for {optimizer!r} at {size} "
            "bytes a number."
        )
    if size != 4 and got == _state(n, optimizer, 4):
        return f"{said} Every number takes bytes_per_number bytes, here {size}, not float32's 4."
    if optimizer != "adamw" and got == _state(n, "adamw", size):
        return f"{said} That is AdamW's state; the optimizer asked for is {optimizer!r}."
    if got["total"] != sum(got[key] for key in KEYS[:3]):
        return f"{said} 'total' should be the sum of the other three."
    return said


def _judge_count(call, where):
    if call.error:
        return None
    args = _arguments(call)
    right = {"attention_weights_bytes": _table, "largest_trainable": _trainable, "largest_batch": _largest}[
        call.function
    ](**args)
    got = call.value
    if got is None:
        return f"{where} returned nothing yet: write its body."
    if isinstance(got, bool) or not isinstance(got, int | float):
        return f"{where} returned a {type(got).__name__}; it should return a whole number."
    if got == right and isinstance(got, int):
        return ""
    if isinstance(got, float) and int(got) == right:
        return f"{where} returned the float {got}; return a whole number (an int): use // where you divide."
    said = f"{where} gave {_number(got)}; the right answer is {right:,}."
    if call.function == "attention_weights_bytes":
        batch, heads, n, layers, size = args.values()
        slips = [
            (_table(batch, heads, n, 1, size), "Every layer keeps its own tables: multiply by n_layers."),
            (_table(batch, 1, n, layers, size), "Every head keeps its own table: multiply by heads."),
            (_table(1, heads, n, layers, size), "Every sequence of the batch keeps its own tables."),
            (layers * batch * heads * n * size, "Each table is n x n, n squared numbers, not n."),
            (_table(batch, heads, n, layers, 1), "Each number takes bytes_per_number bytes: multiply by it."),
        ]
    elif call.function == "largest_trainable":
        memory, optimizer, size = args.values()
        slips = [
            (memory // size, "Each parameter also has a gradient and the optimiser's state, not only its weight."),
            (memory // 16, "16 bytes a parameter is AdamW in float32; use the optimizer and precision asked for."),
            (-(-memory // _state(1, optimizer, size)["total"]), "Round down: a parameter fits whole or not at all."),
        ]
    else:
        memory, n_params, layers, heads, n, optimizer, size = args.values()
        per_sequence = _table(1, heads, n, layers, size)
        left = memory - _state(n_params, optimizer, size)["total"]
        slips = [
            (left // per_sequence, "When the state alone does not fit, no sequence does: the answer is 0."),
            (memory // per_sequence, "The training state comes first: only what it leaves holds sequences."),
            (-(-max(left, 0) // per_sequence), "Round down: a sequence that does not fit whole does not fit."),
        ]
    for count, meaning in slips:
        if got == count and count != right:
            return f"{said} {meaning}"
    return said


def _judge(call):
    where = _where(call)
    message = (_judge_state if call.function == "training_state_bytes" else _judge_count)(call, where)
    if message is not None:
        return message
    error = call.error
    if "is not available here" in error:
        return f"{where} stopped: {error}. Count the numbers from the sizes: build no optimiser, measure nothing."
    if "asks you to write" in error or ("cannot import name" in error and "groundup" in error):
        return f"{where}: {error}. This exercise asks you to write the four functions yourself."
    if "defines no function" in error:
        return f"{where}: {error}. Keep the function under its name at the top level of your code."
    if "MemoryError" in error or "alloc" in error.lower():
        return f"{where} ran out of memory: a model this size cannot be built here. Count from the sizes instead."
    return f"{where} raised an error: {error}"


def check(ns, probed=None):
    if not probed:
        return (
            False,
            "Your functions were not called on fresh sizes: run your program to the end without an error.",
        )
    for call in probed:
        message = _judge(call)
        if message:
            return False, message
    big = next(call for call in probed if call.kwargs.get("bytes_per_number") == 2 and call.args[0] > 10**10)
    total = _state(**_arguments(big))["total"]
    return True, (
        f"All four are right on {len(probed)} sets of sizes they had never seen, from models you can count on "
        f"paper to one of {big.args[0]:,} parameters, whose training state in bfloat16 with AdamW takes "
        f"{total / 1e9:,.0f} GB before it reads a token."
    )

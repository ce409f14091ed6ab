"""Judges training_flops on the probe's fresh sizes: the right count, three forward passes, is
worked out here exactly from the shapes, and the usual wrong ones are named."""


def _forward(vocab_size, d, layers, batch, n):
    return 2 * (layers * 12 * d * d + vocab_size * d) * batch * n + layers * batch * 4 * n * n * d


def _judge(call):
    vocab_size, d, layers, batch, n = call.args
    where = f"training_flops(vocab_size={vocab_size}, d_model={d}, n_layers={layers}, batch={batch}, n={n})"
    if call.error:
        if "is not available here" in call.error:
            return f"{where} stopped: {call.error}. Count from the forward pass, by formula."
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Keep the function under its name at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got, forward = call.value, _forward(*call.args)
    right = 3 * forward
    if isinstance(got, bool) or not isinstance(got, int | float):
        return f"{where} returned {'nothing' if got is None else 'a ' + type(got).__name__}; it should return a whole number."
    if got == right:
        return "" if isinstance(got, int) else f"{where} returned the float {got}; return a whole number (an int)."
    said = f"{where} gave {got:,}; the counter would measure {right:,}."
    if got == 2 * forward:
        return (
            f"{said} That takes the backward pass to cost one forward pass. For one product Y = XW, which gradients "
            "does the backward pass compute, and how big is each?"
        )
    if got == forward:
        return f"{said} That is the forward pass alone; a training step adds the backward pass."
    if right < got < 1.5 * right:
        return (
            f"{said} It counts more than the counter sees: FlopCounterMode counts the matrix products of the forward "
            "and the backward pass, not the optimizer's update, which touches each weight a few times."
        )
    return said


def check(ns, probed=None):
    if not probed:
        return False, "training_flops was not called on fresh sizes: run your program to the end without an error."
    for call in probed:
        message = _judge(call)
        if message:
            return False, message
    measured_forward, measured_step = ns.get("measured_forward"), ns.get("measured_step")
    extra = ""
    if isinstance(measured_forward, int) and isinstance(measured_step, int) and measured_forward > 0:
        extra = f" In your run the counter measured {measured_step:,} FLOPs for the step, {measured_step / measured_forward:.2f} forward passes."
    return True, (
        f"training_flops is right on {len(probed)} sets of sizes it had never seen, up to a model far too large to "
        "build here: every product of the forward pass comes back as three, itself and one gradient for each of its "
        "two inputs. Without attention's products between tokens that is the rule of 6 FLOPs per parameter per token."
        + extra
    )

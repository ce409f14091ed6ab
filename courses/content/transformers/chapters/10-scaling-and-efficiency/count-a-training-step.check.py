_SIZES = ("vocab_size", "d_model", "n_layers", "batch", "n")


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check(ns):
    if not all(_whole(ns.get(name)) and ns[name] > 0 for name in _SIZES):
        return False, "Keep the sizes as the starter code sets them: vocab_size, d_model, n_layers, batch and n."
    vocab_size, d_model, n_layers, batch, n = (ns[name] for name in _SIZES)
    # Recomputed here from the sizes, never taken from the learner's own formula.
    tokens = batch * n
    weight_part = 2 * (n_layers * 12 * d_model**2 + vocab_size * d_model) * tokens
    attention_part = n_layers * batch * 4 * n**2 * d_model
    forward, step = weight_part + attention_part, 3 * (weight_part + attention_part)
    measured_forward, measured_step = ns.get("measured_forward"), ns.get("measured_step")
    if (measured_forward, measured_step) != (forward, step):
        return False, (
            "The measured counts are not those of TinyGPT with these sizes. Keep the model, the tokens and the two "
            "measurements as the starter code has them, and change only the two formula lines."
        )
    got_forward, got_step = ns.get("forward_by_formula"), ns.get("step_by_formula")
    if not _whole(got_forward) or not _whole(got_step):
        return False, "`forward_by_formula` and `step_by_formula` should both be whole numbers of FLOPs."
    if got_forward == weight_part:
        return False, (
            f"The forward formula counts the products with weights only, {attention_part:,} FLOPs short. Which "
            "products in attention have no weight matrix, and how big are they for n tokens of width d_model?"
        )
    if got_forward != forward:
        return False, (
            f"The forward formula gives {got_forward:,} where the counter measured {forward:,}. Count two FLOPs per "
            "weight per token, then add attention's products between tokens, layer by layer and sequence by sequence."
        )
    if got_step == 2 * forward:
        return False, (
            "The forward formula is right, but the step formula is two thirds of the measured count. For one product "
            "Y = XW in the forward pass, which gradients does the backward pass compute, and how big is each?"
        )
    if got_step != step:
        return False, (
            f"The step formula gives {got_step:,} where the counter measured {step:,}. Write it in terms of the "
            "forward count: how many forward passes is one training step?"
        )
    return True, (
        f"Both formulas match the counter exactly: {forward:,} FLOPs forward and {step:,} for the step, three times "
        f"as many. Without attention's products between tokens that is 6 FLOPs per parameter per token; here those "
        f"products make up {3 * attention_part / step:.1%} of the step, a share that grows with the length."
    )

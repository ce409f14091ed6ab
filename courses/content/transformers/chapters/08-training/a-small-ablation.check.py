"""Judges variant_loss on the probe's fresh settings: the same tiny variants are trained here, from
the same seed, and their held-out losses compared; the usual mistakes are the same recipe with one
thing changed. Then one row of the program's own table, picked at random, is trained again here
and compared with what the table claims."""

import random

import torch
from groundup import TinyGPT, Vocab, shrink_token_table, text_loss, train_next_token
from tinytext import TEXT, TRAIN, VALIDATION

# Held-out losses of the probe's tiny runs agree this closely when the recipe is the same.
TOL = 1e-4
# A row of the table, trained again here, agrees this closely (a longer run carries the last bits
# of the learner's own earlier pieces further).
ROW_TOL = 1e-2
# The program's settings, as the starter gives them.
STEPS, SEED = 100, 0
VARIANTS = {
    "baseline": {},
    "sinusoidal positions": {"position": "sinusoidal"},
    "rotary positions": {"position": "rotary"},
    "SwiGLU block": {"ffn": "swiglu"},
    "RMSNorm": {"norm": "rms"},
}
OPTION_NAMES = ("position", "ffn", "norm")


def _variant(
    vocab_size,
    train,
    validation,
    *,
    steps,
    seed=0,
    d_model=32,
    n_heads=4,
    n_layers=1,
    context=32,
    batch_size=16,
    peak_lr=1e-2,
    mistake="",
    **options,
):
    """The recipe, right by default; `mistake` changes one thing."""
    torch.manual_seed(seed)
    model = TinyGPT(vocab_size, d_model, n_heads, n_layers, context, **({} if mistake == "options" else options))
    if mistake != "shrink":
        shrink_token_table(model)
    run_seed = 0 if mistake == "run seed" else seed
    train_next_token(model, train, steps=steps, batch_size=batch_size, context=context, peak_lr=peak_lr, seed=run_seed)
    return text_loss(model, train if mistake == "scored on train" else validation, context)


MISTAKES = [
    ("options", "The options are not passed on: give TinyGPT the position, ffn and norm the call names."),
    ("shrink", "The token table is not shrunk before training, so the variant starts far above ln V."),
    ("scored on train", "That is the loss on the training ids; score the variant on `validation`, held out."),
    ("run seed", "train_next_token is not given the seed, so every variant draws the default batches."),
]


def _where(call) -> str:
    kwargs = call.kwargs
    options = {k: v for k, v in kwargs.items() if k in OPTION_NAMES}
    sizes = ", ".join(f"{k}={v}" for k, v in kwargs.items() if k not in OPTION_NAMES)
    return (
        f"variant_loss with options {options or 'none (the baseline)'} on {len(call.args[1])} fresh training ids "
        f"and {len(call.args[2])} held-out ones, with {sizes}"
    )


def _judge(call):
    where = _where(call)
    if call.error:
        if "defines no function" in call.error:
            return False, (
                f"{where}: {call.error}. Keep it defined with def at the top level of your code: it is called again "
                "in a fresh run that keeps only your imports, functions, classes and plain constants."
            )
        return False, f"{where} raised an error: {call.error}"
    value = call.value
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = float(value.reshape(()))
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = "nothing yet: write its body" if value is None else f"a {type(value).__name__}"
        return False, f"{where} returned {kind}; it should return the held-out loss, a float."
    want = _variant(*call.args, **call.kwargs)
    if abs(value - want) <= TOL * (1 + abs(want)):
        return True, ""
    shown = f"{where} returned {value:.4f}; the same recipe trained here gives {want:.4f}."
    for mistake, said in MISTAKES:
        if abs(value - _variant(*call.args, **call.kwargs, mistake=mistake)) <= TOL * (1 + abs(want)):
            return False, f"{shown} {said}"
    return False, (
        f"{shown} Seed torch's generator with the seed first, then build, shrink, train and score, as the "
        "docstring lists."
    )


def check(ns, probed=None):
    if not probed:
        return False, "variant_loss was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    variants = ns.get("VARIANTS")
    if isinstance(variants, dict):
        for name, options in VARIANTS.items():
            if name not in variants:
                return False, f"VARIANTS has no row {name!r} yet: add it, with the TinyGPT keyword that makes it."
            if variants[name] != options:
                return False, (
                    f"The row {name!r} builds TinyGPT with {variants[name]!r}: it should change exactly one "
                    "thing against the baseline, the one its name says, as one of TinyGPT's keywords."
                )
    table = ns.get("table")
    if not isinstance(table, dict) or set(table) != set(VARIANTS):
        return False, f"Keep `table` as the loop fills it: one held-out loss for each of {', '.join(VARIANTS)}."
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in table.values()):
        return False, "Every entry of `table` should be a held-out loss, a float."
    name = random.choice(list(VARIANTS))
    vocab = Vocab(TEXT)
    again = _variant(
        len(vocab), vocab.encode(TRAIN), vocab.encode(VALIDATION), steps=STEPS, seed=SEED, **VARIANTS[name]
    )
    if abs(table[name] - again) > ROW_TOL:
        return False, (
            f"The table says {table[name]:.3f} for {name!r}, but that variant, trained here with the program's "
            f"settings ({STEPS} steps, seed {SEED}), scores {again:.3f}: keep the table as variant_loss fills it."
        )
    best = min(table, key=table.get)
    worst = max(table, key=table.get)
    return True, (
        f"variant_loss trains fresh variants exactly as the recipe says, and the row for {name!r} checks out. Here "
        f"{best} does best, {table[best]:.3f}, and {worst} worst, {table[worst]:.3f}, against "
        f"{table['baseline']:.3f} for the baseline. With one seed and {STEPS} steps a gap of a few hundredths "
        "can be luck; a gap of several tenths is not."
    )

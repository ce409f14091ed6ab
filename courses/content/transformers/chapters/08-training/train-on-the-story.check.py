"""Judges next_token_batch on the probe's fresh texts (every window of a shuffle of distinct ids
names its start, so each row can be traced back to where it was cut), then the trained model,
rebuilt from its weights alone and scored here on the training text and on the held-out paragraph."""

import math

import torch
from groundup import TinyGPT, Vocab, text_loss
from tinytext import TEXT, TRAIN, VALIDATION

# The goals the instructions state, in nats per character; an even guess over 36 characters is 3.58.
TRAIN_GOAL = 1.2
HELD_OUT_GOAL = 1.8
# A call this small (its text) is printed in full in a message.
PRINTABLE = 12


def _ids(t) -> str:
    return "[" + ", ".join(str(int(x)) for x in t.tolist()) + "]"


def _where(call) -> str:
    data, batch_size, context = call.args
    text = f"data = {_ids(data)}" if len(data) <= PRINTABLE else f"a text of {len(data)} distinct ids"
    with_generator = "a seeded generator" if call.kwargs.get("generator") is not None else "no generator"
    return f"next_token_batch on {text}, batch_size={batch_size}, context={context}, with {with_generator}"


def _judge(call):
    where = _where(call)
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, f"{where} stopped: {error}. Slice each window out of data, as the inputs line does."
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Keep it defined with def at the top level of your code: it is called again "
                "in a fresh run that keeps only your imports, functions, classes and plain constants."
            )
        return False, f"{where} raised an error: {error}"
    data, batch_size, context = call.args
    value = call.value
    if not isinstance(value, tuple | list) or len(value) != 2:
        return False, f"{where} returned {type(value).__name__}; it should return two tensors, inputs and targets."
    inputs, targets = value
    shape = (batch_size, context)
    for name, t in (("inputs", inputs), ("targets", targets)):
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != shape:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            return False, f"{where} returned {name} of shape {got}; it should be {shape}."
    position = {int(x): i for i, x in enumerate(data.tolist())}
    starts = []
    for row in range(batch_size):
        s = position.get(int(inputs[row, 0]), -1)
        if s < 0 or s + context > len(data) or not torch.equal(inputs[row], data[s : s + context]):
            return False, f"{where}: row {row} of inputs, {_ids(inputs[row])}, is not a window of data."
        right = data[s + 1 : s + 1 + context]
        if len(right) < context:
            return False, (
                f"{where}: row {row} starts at position {s}, where no full window of targets fits after it. "
                "Keep the line that draws the starts."
            )
        if not torch.equal(targets[row], right):
            said = ""
            if torch.equal(targets[row], inputs[row]):
                said = (
                    " That is the window of inputs itself, so each position is graded on the character it is "
                    "reading and the model learns to copy."
                )
            elif s >= 1 and torch.equal(targets[row], data[s - 1 : s - 1 + context]):
                said = " That window is moved one place the wrong way: the target follows its input."
            return False, (
                f"{where}: row {row} of inputs is {_ids(inputs[row])}, so its targets should be {_ids(right)}, the "
                f"next id at every position; they are {_ids(targets[row])}.{said}"
            )
        starts.append(s)
    generator = call.kwargs.get("generator")
    if generator is not None:
        fresh = torch.Generator().manual_seed(generator.initial_seed())
        drawn = torch.randint(0, len(data) - context, (batch_size,), generator=fresh).tolist()
        if starts != drawn:
            return False, (
                f"{where}: the windows start at {starts}, where the generator draws {drawn}. Keep the line that draws "
                "the starts from the generator given: a run must be repeatable from its seed."
            )
    return True, ""


def _rebuild(ns, model, vocab_size):
    """The trained stack, rebuilt from its weights alone: the check never calls learner code."""
    state = model.state_dict() if hasattr(model, "state_dict") else {}
    n_heads = ns.get("n_heads")
    if "tokens.table" not in state or "positions" not in state:
        return None, "Keep `model` as the starter builds it: a TinyGPT from groundup, trained in place."
    rows, d_model = state["tokens.table"].shape
    if rows != vocab_size:
        return None, f"The model should have one row per character of the story, {vocab_size}; it has {rows}."
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d_model % n_heads:
        return None, f"Keep `n_heads` as it was: a number of heads that divides the width {d_model}."
    if any(torch.isnan(t).any() for t in state.values()):
        return None, "The model's weights hold NaN: training blew up. Keep the learning rate and the clipping as given."
    n_layers = len({key.split(".")[1] for key in state if key.startswith("blocks.")})
    rebuilt = TinyGPT(vocab_size, d_model, n_heads, n_layers, state["positions"].shape[0])
    try:
        rebuilt.load_state_dict({name: t.float() for name, t in state.items()})
    except RuntimeError:
        return None, "Keep `model` as the starter builds it: a TinyGPT from groundup, trained in place."
    return rebuilt, ""


def _model(ns):
    vocab = Vocab(TEXT)
    model, message = _rebuild(ns, ns.get("model"), len(vocab))
    if model is None:
        return False, message
    losses, curve = ns.get("losses"), ns.get("curve")
    if not isinstance(losses, list) or not losses or not all(isinstance(x, int | float) for x in losses):
        return False, "Keep `losses` as the loop fills it, one batch loss per step: the curve is drawn from it."
    if any(math.isnan(x) for x in losses):
        return False, "Some batch losses are NaN: training blew up. Keep the learning rate and the clipping as given."
    context = model.positions.shape[0]
    on_train = text_loss(model, vocab.encode(TRAIN), context)
    held_out = text_loss(model, vocab.encode(VALIDATION), context)
    if on_train >= TRAIN_GOAL or held_out >= HELD_OUT_GOAL:
        return False, (
            f"The trained model predicts the training text at {on_train:.2f} nats and the held-out paragraph at "
            f"{held_out:.2f}; the goals are below {TRAIN_GOAL} and {HELD_OUT_GOAL}. Train for the steps given, at "
            "the given learning rate and schedule."
        )
    points = curve if isinstance(curve, list) else []
    if len(points) < 5 or not all(isinstance(p, list | tuple) and len(p) == 3 for p in points):
        return False, "Keep `curve` as the loop fills it: (step, training-text loss, held-out loss) every 20 steps."
    last = points[-1]
    if abs(float(last[1]) - on_train) > 1e-3 or abs(float(last[2]) - held_out) > 1e-3:
        return False, (
            f"The last point of `curve` says {float(last[1]):.3f} and {float(last[2]):.3f}, but the trained weights "
            f"score {on_train:.3f} and {held_out:.3f}: keep the curve measured on the model as it trains."
        )
    best = min(points, key=lambda p: float(p[2]))
    return True, (
        f"next_token_batch is right on texts it had never seen, and the model it trained predicts the training text "
        f"at {on_train:.2f} nats and the paragraph it never saw at {held_out:.2f}, against "
        f"{math.log(len(vocab)):.2f} for an even guess. The held-out loss was lowest at step {int(best[0])}, "
        f"{float(best[2]):.2f}, while the training loss kept falling: the gap between the two curves is what the "
        "model memorised rather than learned."
    )


def check(ns, probed=None):
    if not probed:
        return False, "next_token_batch was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    return _model(ns)

import math

import torch
from groundup import TinyGPT, Vocab, text_loss
from tinytext import TEXT

# The goal the instructions state, in nats per character; an even guess over 36 characters is 3.58.
GOAL = 1.4


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


def check(ns):
    vocab = Vocab(TEXT)
    data = vocab.encode(TEXT)
    model, message = _rebuild(ns, ns.get("model"), len(vocab))
    if model is None:
        return False, message
    losses = ns.get("losses")
    if not isinstance(losses, list) or not losses or not all(isinstance(x, (int, float)) for x in losses):
        return False, "Keep `losses` as the loop fills it, one batch loss per step: the curve is drawn from it."
    if any(math.isnan(x) for x in losses):
        return False, "Some batch losses are NaN: training blew up. Keep the learning rate and the clipping as given."
    context = model.positions.shape[0]
    final = text_loss(model, data, context)
    recorded = sum(losses[-10:]) / len(losses[-10:])
    if final >= GOAL:
        if recorded < final / 2:
            return False, (
                f"The batch losses fell to {recorded:.3f}, yet the model predicts the next character of the story at "
                f"{final:.2f} nats, worse than an even guess. A loss that low, that fast, means each position was "
                "graded on a character it could already see: compare what `targets` holds with `inputs`."
            )
        return False, (
            f"The model predicts the next character of the story at {final:.2f} nats; the goal is below {GOAL}. "
            "Train for the steps given, at the given learning rate and schedule."
        )
    return True, (
        f"Trained: the model predicts each next character of the story at {final:.2f} nats, against "
        f"{math.log(len(vocab)):.2f} for an even guess, so it gives the right character a probability of about "
        f"{math.exp(-final):.2f} on a typical step. The batch losses and the whole-story loss agree, as they should "
        "when every position is asked for the character after it."
    )

"""Judges continue_text on the probe's fresh models, then the program's own run: the trained
model is rebuilt here from its weights and scored on the story, and every sample it printed is
checked against that model, step by step, on the last max_len characters before each one."""

import torch
from groundup import TinyGPT, Vocab, text_loss
from tinytext import TEXT

TIE = 1e-4  # float32 rounding between two ways of computing the same logits
GOOD_LOSS = 1.3  # nats per character on the whole story: below this the text reads as words


def _rebuild(model, n_heads):
    state = model.state_dict() if hasattr(model, "state_dict") else {}
    if "tokens.table" not in state or "positions" not in state:
        return None
    vocab_size, d_model = state["tokens.table"].shape
    n_layers = len({key.split(".")[1] for key in state if key.startswith("blocks.")})
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1 or d_model % n_heads:
        return None
    rebuilt = TinyGPT(vocab_size, d_model, n_heads, n_layers, state["positions"].shape[0])
    try:
        rebuilt.load_state_dict({name: t.float() for name, t in state.items()})
    except RuntimeError:
        return None
    return rebuilt.eval()


def _follows(model, vocab, text, written, settings):
    """'' when every character of `written` is one the model allows after `text`; else why not."""
    temperature, top_k, top_p = settings.get("temperature", 1.0), settings.get("top_k"), settings.get("top_p")
    max_len = model.positions.shape[0]
    ids = vocab.encode(text + written)
    with torch.no_grad():
        for t in range(len(text), len(ids)):
            window = ids[max(0, t - max_len) : t]
            logits = model(window[None])[0, -1] / (temperature or 1.0)
            chosen = logits[ids[t]]
            if temperature == 0:
                ok, rule = chosen >= logits.max() - TIE, "the most likely character"
            elif top_k is not None:
                ok, rule = chosen >= logits.topk(top_k).values[-1] - TIE, f"among the {top_k} most likely characters"
            elif top_p is not None:
                probs = torch.softmax(logits.double(), dim=-1)
                ok, rule = probs[logits > chosen].sum() < top_p + TIE, f"inside the nucleus of p={top_p}"
            else:
                ok, rule = torch.softmax(logits.double(), dim=-1)[ids[t]] > 1e-9, "a character the model gives a chance"
            if not ok:
                before = "".join(vocab.decode(window))
                return f"character {t - len(text)} ({vocab.tokens[int(ids[t])]!r}) after {before!r} should be {rule}"
    return ""


def _judge(call):
    model, vocab, text, n_new = call.args
    where = f"continue_text on a fresh model of {model.positions.shape[0]} positions after {text!r}, n_new={n_new}, {call.kwargs}"
    if call.error:
        if "defines no function" in call.error:
            return f"{where}: {call.error}. Define it with def at the top level of your code."
        return f"{where} raised an error: {call.error}"
    got = call.value
    if got is None:
        return f"{where} returned nothing yet: write its body."
    if not isinstance(got, str):
        return f"{where} returned a {type(got).__name__}; it should return the new characters as one string."
    if len(got) != n_new:
        return f"{where} returned {got!r}; it should return the {n_new} new characters only, without the prompt."
    if any(c not in vocab.tokens for c in got):
        return f"{where} returned {got!r}, with characters this model's vocabulary does not have: decode what generate wrote."
    why = _follows(model, vocab, text, got, call.kwargs)
    return f"{where} returned {got!r}, but {why}." if why else ""


def check(ns, probed=None):
    if not probed:
        return False, "continue_text was not called on fresh models: run your program to the end without an error."
    for call in probed:
        message = _judge(call)
        if message:
            return False, message
    model = _rebuild(ns.get("model"), ns.get("n_heads"))
    if model is None:
        return False, "Keep `model` and `n_heads` as the starter code makes them: Part 7's TinyGPT."
    vocab = Vocab(TEXT)
    if model.tokens.table.shape[0] != len(vocab):
        return False, "Keep the model's vocabulary as the starter code makes it: one token per character of the story."
    loss = text_loss(model, vocab.encode(TEXT), model.positions.shape[0])
    if loss > GOOD_LOSS:
        return False, (
            f"The model scores {loss:.2f} nats per character on the story; trained as the starter code trains it, it "
            f"scores about 1.0. Below {GOOD_LOSS} its samples read as words: keep the training as it was."
        )
    prompt, samples, ways, n_new = ns.get("prompt"), ns.get("samples"), ns.get("ways"), ns.get("n_new")
    if not isinstance(prompt, str) or not prompt or any(c not in vocab.tokens for c in prompt):
        return False, "Keep `prompt` as a string of characters from the story."
    if not isinstance(ways, dict) or not isinstance(samples, dict) or set(samples) != set(ways) or len(ways) < 4:
        return (
            False,
            "Keep `ways` as the starter code sets them, and let the loop fill `samples` with one text for each.",
        )
    if set(samples.values()) == {None}:
        return False, "continue_text returns nothing yet: write its body."
    texts = list(samples.values())
    for name, settings in ways.items():
        text = samples[name]
        if not isinstance(settings, dict) or not isinstance(text, str) or len(text) != n_new:
            return False, f"`samples[{name!r}]` should be the {n_new} characters continue_text wrote for it."
        why = _follows(model, vocab, prompt, text, settings)
        if why:
            return False, f"The {name} sample does not come from this model: {why}."
    greedy = [name for name, s in ways.items() if s.get("temperature") == 0]
    sampled = [samples[name] for name in ways if name not in greedy]
    if greedy and any(text == samples[greedy[0]] for text in sampled):
        return False, "A sampled text is the same as the greedy one: pass each way's settings on to generate."
    return True, (
        f"continue_text is right on {len(probed)} fresh models, and the model you trained scores {loss:.2f} nats per "
        f"character on the story. All {len(texts)} samples come from it: the greedy one takes the most likely character "
        "at every step, the others draw only what their filters allow, always on the last "
        f"{model.positions.shape[0]} characters."
    )

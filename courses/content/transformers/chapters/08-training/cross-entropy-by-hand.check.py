"""Judges token_losses on the probe's fresh logits (the right losses worked out here, in float64,
from each call's own arguments; the first call that differs is shown with its numbers when it is
small enough to read), then the program's own numbers, recomputed from the logits it left."""

import math

import torch
import torch.nn.functional as F
from groundup import Vocab
from tinytext import TEXT

SENTENCE = "the light went round"
ATOL = RTOL = 1e-5
# A call this small (logits and targets together) is printed in full in a message.
PRINTABLE = 16


def _losses(logits, targets, *, pick="target", log=True):
    """The loss of every prediction in float64, right by default; the keyword arguments make the
    mistakes the check recognises (a row averaged, the largest score picked, probabilities instead
    of their logs)."""
    logits = logits.double()
    log_probs = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    table = log_probs if log else log_probs.exp()
    if pick == "mean":
        return -table.mean(dim=-1)
    index = targets if pick == "target" else logits.argmax(dim=-1)
    return -table.gather(-1, index[..., None]).squeeze(-1)


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if t.dim() == 0:
        return _number(t.item(), digits)
    if t.dim() == 1:
        return "[" + ", ".join(_number(x, digits) for x in t.tolist()) + "]"
    return "[" + ", ".join(_show(row, digits) for row in t) + "]"


def _both(got, want) -> tuple[str, str]:
    for digits in range(3, 8):
        shown = _show(got, digits), _show(want, digits)
        if shown[0] != shown[1]:
            break
    return shown


def _input(call) -> str:
    logits, targets = call.args
    if logits.numel() + targets.numel() <= PRINTABLE:
        return f"logits = {_show(logits)}, targets = {_show(targets)}"
    return f"logits {tuple(logits.shape)}, targets {tuple(targets.shape)}"


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    return None


def _close(got, want) -> bool:
    return tuple(got.shape) == tuple(want.shape) and bool(torch.allclose(got.double(), want, atol=ATOL, rtol=RTOL))


def _judge(call):
    """(ok, message) for one call."""
    where = f"token_losses on {_input(call)}"
    if call.error:
        error = call.error
        if "is not available here" in error:
            return False, (
                f"{where} stopped: {error}. Pick each row's entry from the log-probabilities the function "
                "already computes."
            )
        if "defines no function" in error:
            return False, (
                f"{where}: {error}. Keep it defined with def at the top level of your code: it is called again "
                "in a fresh run that keeps only your imports, functions, classes and plain constants."
            )
        if error.startswith("NameError"):
            return False, (
                f"{where} raised {error}. Your function is called again in a fresh run that keeps only your "
                "imports, functions, classes and plain constants; compute anything else inside the function."
            )
        return False, f"{where} raised an error: {error}"
    logits, targets = call.args
    want = _losses(logits, targets)
    got = _tensor(call.value)
    if got is None:
        kind = "nothing" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}; it should return a tensor of shape {tuple(targets.shape)}."
    if tuple(got.shape) != tuple(targets.shape):
        said = ""
        if got.numel() == 1 and targets.numel() > 1:
            said = " That is one number: keep one loss per prediction, and leave the mean to the caller."
        return False, (
            f"{where} returned shape {tuple(got.shape)}; it should be {tuple(targets.shape)}, the shape of "
            f"targets: one loss per prediction.{said}"
        )
    if not got.is_floating_point() or torch.isnan(got).any() or torch.isinf(got).any():
        return False, f"{where} gave {_show(got) if got.numel() <= 8 else 'NaN, infinity or whole numbers'}."
    if _close(got, want):
        return True, ""
    if logits.numel() + targets.numel() <= PRINTABLE:
        mine, right = _both(got, want)
        shown = f"{where} gave {mine}; the right losses are {right}."
    else:
        flat_got, flat_want = got.double().reshape(-1), want.reshape(-1)
        i = int((~torch.isclose(flat_got, flat_want, atol=ATOL, rtol=RTOL)).nonzero()[0])
        mine, right = _both(flat_got[i], flat_want[i])
        shown = f"{where} gives {mine} for prediction {i} (counting in reading order), where the right loss is {right}."
    mistakes = [
        (
            dict(pick="mean"),
            "That is the average of each whole row of log-probabilities: keep only the entry its target names.",
        ),
        (dict(pick="argmax"), "That picks the largest score of each row; pick the one the target names."),
        (dict(log=False), "Those are probabilities; the loss is minus their log."),
    ]
    for kwargs, said in mistakes:
        if _close(got, _losses(logits, targets, **kwargs)):
            return False, f"{shown} {said}"
    if _close(-got, want):
        return False, f"{shown} The sign is off: a log-probability is negative, and a loss is not."
    return False, shown


def _program(ns):
    """The program's own numbers, recomputed from the logits it left: (ok, message)."""
    vocab = Vocab(TEXT)
    ids = vocab.encode(SENTENCE)[None]
    targets = ids[:, 1:]
    shape = (1, targets.shape[1], len(vocab))
    logits, by_hand, per_position = ns.get("logits"), ns.get("by_hand"), ns.get("per_position")
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != shape:
        return False, f"Keep `logits` as the model gives them: one row of {len(vocab)} scores per position, {shape}."
    logits = logits.double()
    if not torch.isfinite(logits).all():
        return False, "The logits hold NaN or infinity: keep the model as the code builds it."
    spread = logits.max(dim=-1).values - logits.min(dim=-1).values
    if (spread < 1e-3).any():
        return False, (
            "Some rows of `logits` score every character the same, and on such a row any way of reading it gives "
            "the same loss. Keep the model as the code builds it, with its weights as drawn."
        )
    expected_each = F.cross_entropy(logits[0], targets[0], reduction="none")
    if not isinstance(per_position, torch.Tensor) or tuple(per_position.shape) != (targets.shape[1],):
        return False, f"Keep `per_position` as the code makes it: the {targets.shape[1]} losses of the sentence."
    if not isinstance(by_hand, torch.Tensor) or by_hand.numel() != 1:
        return False, "Keep `by_hand` as a tensor holding a single number: the mean loss over the positions."
    if not torch.allclose(per_position.double(), expected_each, atol=1e-4):
        return False, "`per_position` is not what token_losses gives for the sentence's logits: keep it computed so."
    if not torch.allclose(by_hand.double().reshape(()), expected_each.mean(), atol=1e-4):
        return False, "`by_hand` should be the mean of `per_position`, as the code computes it."
    return True, ""


def check(ns, probed=None):
    if not probed:
        return False, "token_losses was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    ok, message = _program(ns)
    if not ok:
        return False, message
    vocab = Vocab(TEXT)
    ids = vocab.encode(SENTENCE)
    each = F.cross_entropy(ns["logits"].double()[0], ids[1:], reduction="none")
    worst = int(each.argmax())
    return True, (
        f"token_losses is right on {len(probed)} inputs it had never seen, from a single prediction to batches "
        f"with two leading axes. On the sentence the mean is {each.mean().item():.4f} nats, the same as "
        f"F.cross_entropy, and close to ln {len(vocab)} = {math.log(len(vocab)):.4f}: an untrained model is about "
        f"as unsure as an even guess. Its worst guess is at position {worst}, where the right next character was "
        f"{vocab.tokens[int(ids[worst + 1])]!r}."
    )

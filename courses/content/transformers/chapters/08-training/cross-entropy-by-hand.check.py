import math

import torch
import torch.nn.functional as F
from groundup import Vocab
from tinytext import TEXT

SENTENCE = "the light went round"


def _close(value, expected):
    return (
        isinstance(value, torch.Tensor) and value.shape == expected.shape and torch.allclose(value, expected, atol=1e-4)
    )


def check(ns):
    vocab = Vocab(TEXT)
    ids = vocab.encode(SENTENCE)[None]
    inputs, targets = ids[:, :-1], ids[:, 1:]
    shape = (1, targets.shape[1], len(vocab))
    logits, by_hand, per_position = ns.get("logits"), ns.get("by_hand"), ns.get("per_position")
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != shape:
        return False, f"Keep `logits` as the model gives them: one row of {len(vocab)} scores per position, {shape}."
    if torch.isnan(logits).any() or torch.isinf(logits).any():
        return False, "`logits` holds NaN or infinity. Keep them as the model gives them."
    if not isinstance(ns.get("targets"), torch.Tensor) or not torch.equal(ns["targets"], targets):
        return False, "Keep `targets` as the starter builds them: the sentence's ids moved one place to the left."
    if isinstance(by_hand, (int, float)) and not isinstance(by_hand, bool):
        by_hand = torch.tensor(float(by_hand))
    if not isinstance(by_hand, torch.Tensor) or by_hand.numel() != 1:
        return False, "`by_hand` should be a single number: the mean loss over the 19 positions."
    logits, by_hand = logits.float(), by_hand.float().reshape(())
    if torch.isnan(by_hand):
        return False, "`by_hand` is NaN. A log-softmax row never is; look for a division or a log of zero."
    expected_each = F.cross_entropy(logits[0], targets[0], reduction="none")
    expected = expected_each.mean()
    if not torch.allclose(by_hand, expected, atol=1e-4):
        log_probs = torch.log_softmax(logits[0], dim=-1)
        n = targets.shape[1]
        if torch.allclose(by_hand, -log_probs.mean(), atol=1e-4):
            return False, (
                f"`by_hand` is {by_hand.item():.4f}: the average over all {len(vocab)} characters of each row. The loss "
                "reads one entry per row, the log-probability of the character that really comes next."
            )
        if torch.allclose(by_hand, -expected, atol=1e-4):
            return False, "The size is right but the sign is not: a log-probability is negative, and a loss is not."
        if torch.allclose(by_hand, expected * n, atol=1e-3):
            return False, f"That is the sum over the {n} positions. F.cross_entropy reports their mean."
        if torch.allclose(by_hand, -log_probs[torch.arange(n), inputs[0]].mean(), atol=1e-4):
            return False, (
                "`by_hand` scores each position on the character it already holds. The model is asked for the one "
                "after it: read the right tensor of ids."
            )
        if torch.allclose(by_hand, -torch.softmax(logits[0], -1)[torch.arange(n), targets[0]].mean(), atol=1e-4):
            return False, "That averages probabilities. Cross-entropy takes the log of each one first."
        return False, (
            f"`by_hand` is {by_hand.item():.4f}, F.cross_entropy says {expected.item():.4f}. At each position, take "
            "the log-probability of the right next character, negate it, and average."
        )
    if not _close(per_position, expected_each):
        return (
            False,
            "`by_hand` is right. Keep `per_position` as well: the 19 losses, one per position, before the mean.",
        )
    worst = int(expected_each.argmax())
    return True, (
        f"{expected.item():.4f} nats, the same as F.cross_entropy, and close to ln {len(vocab)} = "
        f"{math.log(len(vocab)):.4f}: an untrained model is about as unsure as an even guess. Its worst guess is "
        f"at position {worst}, where the right next character was {vocab.tokens[int(targets[0, worst])]!r}."
    )

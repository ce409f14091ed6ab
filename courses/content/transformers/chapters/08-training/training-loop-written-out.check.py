"""Judges next_token_loss and train_next_token on the probe's fresh inputs. The right loss is worked
out here, in float64, from each call's own logits and targets. The right losses of a training run
come from the course's loop, run here on the very model the probe built from the seed (each call's
arguments are made again in this process); the usual mistakes are the same loop with one thing
changed, so the check can name the one the learner's run matches."""

import copy
import math

import torch
from groundup import adamw_with_decay, lr_at, next_token_batch

ATOL = RTOL = 1e-5
# Losses of a run agree this closely: a loss written by hand and the library's differ in their last
# bits, and a few optimiser steps carry that on, but each mistake below moves them far more.
RUN_TOL = 1e-4
# A call this small (logits and targets together) is printed in full in a message.
PRINTABLE = 16


def _number(x: float, digits: int = 3) -> str:
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _show(t, digits: int = 3) -> str:
    if isinstance(t, list):
        return "[" + ", ".join(_number(x, digits) for x in t) + "]"
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


def _tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if type(x).__module__ == "numpy":
        return torch.as_tensor(x)
    if isinstance(x, int | float) and not isinstance(x, bool):
        return torch.tensor(float(x))
    return None


def _error(where: str, error: str, advice: str) -> str:
    if "is not available here" in error:
        return f"{where} stopped: {error}. {advice}"
    if "defines no function" in error:
        return (
            f"{where}: {error}. Define it with def at the top level of your code, under that name: it is called "
            "again in a fresh run that keeps only your imports, functions, classes and plain constants."
        )
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your functions are called again in a fresh run that keeps only your imports, "
            "functions, classes and plain constants (such as D = 8); compute anything else inside them."
        )
    return f"{where} raised an error: {error}"


# next_token_loss


def _loss(logits, targets, *, pick="target", reduce="mean", shift=True):
    """The mean loss in float64, right by default; the keyword arguments make the mistakes the check
    recognises."""
    rows = logits.double().reshape(-1, logits.shape[-1])
    index = targets.reshape(-1, 1)
    top = rows.max(dim=1, keepdim=True).values if shift else torch.zeros_like(rows[:, :1])
    log_sum_exp = top.squeeze(1) + torch.log(torch.exp(rows - top).sum(dim=1))
    log_probs = rows - log_sum_exp[:, None]
    each = -(log_probs.mean(dim=1) if pick == "mean" else log_probs.gather(1, index).squeeze(1))
    return each.sum() if reduce == "sum" else each.mean()


def _loss_input(call) -> str:
    logits, targets = call.args
    if logits.numel() + targets.numel() <= PRINTABLE:
        return f"logits = {_show(logits)}, targets = {_show(targets)}"
    return f"logits {tuple(logits.shape)}, targets {tuple(targets.shape)}, with scores up to {logits.abs().max():.0f}"


def _judge_loss(call):
    where = f"next_token_loss on {_loss_input(call)}"
    if call.error:
        return False, _error(
            where, call.error, "Build it from torch.exp, torch.log, max and sums, as the docstring says."
        )
    logits, targets = call.args
    want = _loss(logits, targets)
    got = _tensor(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where} returned {kind}; it should return a tensor holding one number, the mean loss."
    if got.numel() != 1:
        return False, (
            f"{where} returned a tensor of shape {tuple(got.shape)}; it should hold one number, the mean over "
            "all the predictions."
        )
    value = got.double().reshape(())
    if not torch.isfinite(value):
        if logits.abs().max() > 80:
            return False, (
                f"{where} gave {value.item()}. exp of a score above about 88 overflows a float32: subtract each "
                "row's largest score before exp, and add it back after the log."
            )
        return False, f"{where} gave {value.item()}; the right loss is {_number(want.item())}."
    if torch.allclose(value, want, atol=ATOL, rtol=RTOL):
        return True, ""
    mine, right = _both(value, want)
    shown = f"{where} gave {mine}; the right loss is {right}."
    mistakes = [
        (dict(reduce="sum"), "That is the sum over the predictions; the loss is their mean."),
        (dict(pick="mean"), "That averages each whole row of log-probabilities; keep only the entry the target names."),
    ]
    for kwargs, said in mistakes:
        if torch.allclose(value, _loss(logits, targets, **kwargs), atol=ATOL, rtol=RTOL):
            return False, f"{shown} {said}"
    if torch.allclose(-value, want, atol=ATOL, rtol=RTOL):
        return False, f"{shown} The sign is off: the loss is log-sum-exp minus the right score, never below zero."
    return False, shown


# train_next_token


def _run(model, data, *, steps, batch_size=32, context=32, peak_lr=1e-2, warmup=None, seed=0, **mistake):
    """The course's loop on a copy of `model`, right by default; `mistake` changes one thing."""
    model = copy.deepcopy(model)
    generator = torch.Generator().manual_seed(seed)
    if warmup is None:
        warmup = steps // 10 if mistake.get("floor") == "none" else max(1, steps // 10)
    if mistake.get("optimizer") == "plain":
        optimizer = torch.optim.AdamW(model.parameters(), lr=peak_lr)
    else:
        optimizer = adamw_with_decay(model, peak_lr)
    losses = []
    for step in range(steps):
        if mistake.get("batches") == "same":
            generator = torch.Generator().manual_seed(seed)
        inputs, targets = next_token_batch(data, batch_size, context, generator)
        if mistake.get("targets") == "inputs":
            targets = inputs
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        rate = lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
        if mistake.get("schedule") != "none" and mistake.get("schedule") != "late":
            for group in optimizer.param_groups:
                group["lr"] = rate
        if mistake.get("zero_grad") != "never":
            optimizer.zero_grad()
        loss.backward()
        if mistake.get("clip") != "none":
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if mistake.get("schedule") == "late":
            for group in optimizer.param_groups:
                group["lr"] = rate
        losses.append(loss.item())
    return losses


RUN_MISTAKES = [
    (
        dict(targets="inputs"),
        "The targets are the inputs themselves, so the model is graded on the token it is reading: use the targets "
        "next_token_batch returns, the same windows moved one token on.",
    ),
    (
        dict(zero_grad="never"),
        "The gradients are never cleared, so each step adds to the last ones in .grad: clear them before backward().",
    ),
    (
        dict(schedule="none"),
        "The learning rate stays at peak_lr: set every parameter group's rate to lr_at(...) at each step.",
    ),
    (
        dict(schedule="late"),
        "The rate for each step is set after optimizer.step(), so every step runs at the previous step's rate: set "
        "it before the step.",
    ),
    (
        dict(clip="none"),
        "The gradient is not clipped: on this tiny model its length starts above 1. Clip it to 1 between "
        "backward() and the optimiser's step.",
    ),
    (
        dict(optimizer="plain"),
        "That is plain AdamW on every parameter; use adamw_with_decay(model, peak_lr), which decays only the "
        "matrices and uses beta2 = 0.95.",
    ),
    (
        dict(floor="none"),
        "With warmup=None the warm-up should be a tenth of the steps but at least 1: max(1, steps // 10).",
    ),
    (
        dict(batches="same"),
        "Every step trains on the same batch: make one generator before the loop and let next_token_batch draw from "
        "it at every step.",
    ),
]


def _settings(call) -> str:
    model, data = call.args
    width = model.table.shape[1]
    words = ", ".join(f"{key}={value}" for key, value in call.kwargs.items())
    return f"train_next_token on a fresh tiny model ({model.table.shape[0]} tokens, width {width}) and {len(data)} random token ids, with {words}"


def _losses_of(value):
    if isinstance(value, torch.Tensor) and value.dim() == 1:
        value = value.tolist()
    if not isinstance(value, list | tuple):
        return None
    out = []
    for x in value:
        t = _tensor(x)
        if t is None or t.numel() != 1:
            return None
        out.append(float(t.reshape(())))
    return out


def _judge_run(call):
    where = _settings(call)
    if call.error:
        return False, _error(where, call.error, "Score each batch with your own next_token_loss.")
    steps = call.kwargs["steps"]
    got = _losses_of(call.value)
    if got is None:
        kind = "nothing yet: write its body" if call.value is None else f"a {type(call.value).__name__}"
        return False, f"{where}, returned {kind}; it should return a list of {steps} floats, the loss of every step."
    if len(got) != steps:
        return False, f"{where}, returned {len(got)} losses; it should return one per step, {steps}."
    want = _run(*call.args, **call.kwargs)
    if any(math.isnan(x) for x in got):
        return False, f"{where}, returned NaN among its losses; the right run gives {_show(want)}."
    if torch.allclose(torch.tensor(got), torch.tensor(want), atol=RUN_TOL, rtol=RUN_TOL):
        return True, ""
    step = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if abs(a - b) > RUN_TOL * (1 + abs(b)))
    mine, right = _both(got, want)
    shown = f"{where}, returned the losses {mine}; the right run gives {right}, and they part at step {step}."
    for mistake, said in RUN_MISTAKES:
        if torch.allclose(
            torch.tensor(got), torch.tensor(_run(*call.args, **call.kwargs, **mistake)), atol=RUN_TOL, rtol=RUN_TOL
        ):
            return False, f"{shown} {said}"
    if step == 0:
        return False, (
            f"{shown} The very first loss differs, before any step: draw the batch with next_token_batch and the "
            "generator seeded with `seed`, and score it with your next_token_loss."
        )
    return False, shown


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    counts, failures = {}, {}
    for call in probed:
        counts[call.function] = counts.get(call.function, 0) + 1
        if call.function not in failures:
            ok, message = (_judge_loss if call.function == "next_token_loss" else _judge_run)(call)
            if not ok:
                failures[call.function] = message
    if failures:
        message = next(iter(failures.values()))
        right = [name for name in counts if name not in failures]
        return False, f"{right[0]} is right on all {counts[right[0]]} of its inputs. {message}" if right else message
    runs = counts.get("train_next_token", 0)
    return True, (
        f"next_token_loss is right on {counts.get('next_token_loss', 0)} inputs it had never seen, logits in the "
        f"hundreds included, and train_next_token trains {runs} fresh tiny models step for step as the course's loop "
        "does: the same batches, the same scheduled rates, cleared and clipped gradients. Part 9 trains its model "
        "with your loop."
    )

import copy
import math

import torch
from groundup import FeedForward

_NAME = "residual, pre-norm"


def _blocks(state, d_model, depth):
    """The learner's blocks, rebuilt from their weights: a check never calls the learner's code."""
    blocks = [FeedForward(d_model) for _ in range(depth)]
    for i, block in enumerate(blocks):
        block.load_state_dict({name: state[f"{i}.{name}"].float() for name in block.state_dict()})
    return blocks


def _norms(x, blocks, update):
    out = [x.norm(dim=-1).mean().item()]
    for block in blocks:
        x = update(block, x)
        out.append(x.norm(dim=-1).mean().item())
    return out


def _close(a, b):
    return all(math.isclose(p, q, rel_tol=1e-3, abs_tol=1e-4) for p, q in zip(a, b, strict=True))


def _show(t) -> str:
    if t.dim() == 1:
        return "[" + ", ".join(f"{v:.3f}".rstrip("0").rstrip(".") for v in t.tolist()) + "]"
    return "[" + ", ".join(_show(row) for row in t) + "]"


def _judge(call):
    block, norm, x = call.args
    where = f"pre_norm_step on x = {_show(x)}" if x.numel() <= 4 else f"pre_norm_step on x of shape {tuple(x.shape)}"
    where += " (a fresh block and norm, weights drawn at random)"
    if call.error:
        return False, f"{where} raised an error: {call.error}"
    got = call.value
    if not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return (
            False,
            f"{where} returned {type(got).__name__}; it should return the updated stream, shape {tuple(x.shape)}.",
        )
    block, norm, x = copy.deepcopy(block).double(), copy.deepcopy(norm).double(), x.double()
    with torch.no_grad():
        right = x + block(norm(x))
        if torch.allclose(got.double(), right, atol=1e-4, rtol=1e-4):
            return True, ""
        shown = (
            f"{where} gave {_show(got.float())}; the right update is {_show(right.float())}."
            if x.numel() <= 4
            else f"{where} does not give x + block(norm(x))."
        )
        wrong = [
            (x + block(x), "The block still reads the raw stream: give it norm(x), and add its result to x itself."),
            (norm(x + block(x)), "That is post-norm: the sum is normalised. Normalise only what the block reads."),
            (
                norm(x) + block(norm(x)),
                "The stream is replaced by its normalised copy; only the block's input is normalised.",
            ),
            (block(norm(x)), "The residual path is gone: add the block's result to x instead of replacing it."),
        ]
        for value, said in wrong:
            if torch.allclose(got.double(), value, atol=1e-4, rtol=1e-4):
                return False, f"{shown} {said}"
    return False, shown


def check(ns, probed=None):
    if not probed:
        return False, "pre_norm_step was not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        ok, message = _judge(call)
        if not ok:
            return False, message
    blocks, norm, x0, norms = ns.get("blocks"), ns.get("norm"), ns.get("x0"), ns.get("norms")
    state = blocks.state_dict() if hasattr(blocks, "state_dict") else {}
    norm_state = norm.state_dict() if hasattr(norm, "state_dict") else {}
    if "0.expand.weight" not in state or set(norm_state) != {"weight", "bias"}:
        return False, "Keep `blocks` and `norm` as the starter code builds them."
    depth = len({key.split(".")[0] for key in state})
    d_model = state["0.expand.weight"].shape[1]
    if not isinstance(x0, torch.Tensor) or x0.dim() != 2 or x0.shape[-1] != d_model or torch.isnan(x0).any():
        return False, f"Keep `x0` as it was: token vectors of width {d_model}."
    if not isinstance(norms, dict) or not isinstance(norms.get(_NAME), list) or len(norms[_NAME]) != depth + 1:
        return False, f"Keep the loop that fills `norms`: one size per depth, {depth + 1} for each rule."
    got = norms[_NAME]
    if not all(isinstance(v, float) for v in got) or any(math.isnan(v) for v in got):
        return False, "The pre-norm sizes hold NaN or something other than numbers: keep the loop as it was."
    weight, bias = norm_state["weight"].float(), norm_state["bias"].float()

    def normed(x):
        return torch.nn.functional.layer_norm(x, (d_model,), weight, bias, eps=1e-5)

    x0 = x0.float()
    net = _blocks(state, d_model, depth)
    with torch.no_grad():
        expected = _norms(x0, net, lambda block, x: x + block(normed(x)))
        if _close(got, expected):
            plain = _norms(x0, net, lambda block, x: x + block(x))
            return True, (
                f"With pre-norm the stream grows from {expected[0]:.1f} to {expected[-1]:.1f} over {depth} blocks; "
                f"without a norm it reaches {plain[-1]:.0f}. Each block now adds an update of a steady size, so the "
                "sum grows slowly and the gradient keeps a direct path to the input."
            )
        if _close(got, _norms(x0, net, lambda block, x: x + block(x))):
            return False, (
                "The pre-norm curve lies on top of the 'residual, no norm' one: the block still reads the raw stream. "
                "Give it a normalised copy, and add its result to the stream itself."
            )
        if _close(got, _norms(x0, net, lambda block, x: normed(x + block(x)))):
            return False, (
                "That is post-norm: the sum is normalised after each block, so the curve sits flat. Pre-norm "
                "normalises only what the block reads, and leaves the stream itself alone."
            )
        if _close(got, _norms(x0, net, lambda block, x: normed(x) + block(normed(x)))):
            return False, "The stream itself is replaced by its normalised copy. Only the block's input is normalised."
        if _close(got, _norms(x0, net, lambda block, x: block(normed(x)))):
            return False, "The residual path is gone: add the block's result to the stream instead of replacing it."
    return False, "The pre-norm sizes do not match the pre-norm rule: the stream plus the block of a normalised stream."

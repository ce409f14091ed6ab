"""The calls that judge pre_norm_step on inputs no program has seen: fresh feed-forward blocks and
layer norms (gains and shifts far from 1 and 0, so a misplaced norm shows) on streams from one
token to a batch of sequences."""

import sys

import torch
from groundup import FeedForward, LayerNorm

BY_HAND: list[str] = []
# The course's finished block, which holds the same rule, refused to your code (BY_HAND cannot name
# it: groundup is installed only where an exercise runs).
COURSE_COPIES = ("pre_norm_block", "Block", "TinyGPT")


def _refuse_course_copies():
    import groundup

    for name in COURSE_COPIES:
        real = getattr(groundup, name, None)
        if real is None:
            continue

        def guarded(*args, _name=name, _real=real, **kwargs):
            frame = sys._getframe(1)
            while frame is not None:  # refused when your code (compiled as "<your code>") or the probe asks
                if frame.f_code.co_filename == "<your code>" or frame.f_code.co_name == "run_probe":
                    raise RuntimeError(f"groundup.{_name} is not available here: write the rule yourself")
                frame = frame.f_back
            return _real(*args, **kwargs)

        setattr(groundup, name, guarded)


_refuse_course_copies()


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for shape in ((1, 4), (3, 8), (2, 5, 16), (1, 1, 8)):
        d = shape[-1]
        block, norm = FeedForward(d), LayerNorm(d)
        with torch.no_grad():
            for p in block.parameters():
                p.copy_(torch.randn(p.shape, generator=g) / (p.shape[-1] ** 0.5 if p.dim() == 2 else 2))
            norm.weight.copy_(1 + 0.5 * torch.randn(d, generator=g))
            norm.bias.copy_(0.5 * torch.randn(d, generator=g))
        x = 3 * torch.randn(*shape, generator=g) + 1
        made.append(("pre_norm_step", (block.eval(), norm.eval(), x)))
    return made

"""The calls that judge count on sizes no program has seen: one tiny stack whose count can be worked
out on paper, then vocabularies, context lengths, widths and depths drawn afresh, GPT-2 small's
among none of them."""

import sys

import torch

# Counting a model's parameters is what count replaces: here it must come from the formula.
BY_HAND = [
    "torch.nn.Module.parameters",
    "torch.nn.Module.named_parameters",
    "torch.nn.Module.state_dict",
    "torch.nn.TransformerEncoderLayer",
]
# The course's finished stack and its own formula, refused to your code the same way (BY_HAND
# cannot name them: groundup is installed only where an exercise runs).
COURSE_COPIES = ("TinyGPT", "Block", "matmul_parameters", "forward_flops", "training_flops")


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
                    raise RuntimeError(f"groundup.{_name} is not available here: count the parameters by formula")
                frame = frame.f_back
            return _real(*args, **kwargs)

        setattr(groundup, name, guarded)


_refuse_course_copies()


def calls(seed):
    g = torch.Generator().manual_seed(seed)

    def draw(low, high):
        return int(torch.randint(low, high, (1,), generator=g))

    made = [("count", (draw(3, 8), draw(2, 5), 2 * draw(1, 3), 1))]
    for _ in range(5):
        sizes = {"V": draw(10, 60000), "P": draw(8, 4096), "d": 8 * draw(1, 160), "L": draw(1, 48)}
        made.append(("count", (), sizes))
    return made

"""The calls that judge variant_loss on settings no program has seen: three variants of a model
far smaller than the exercise's, each trained for a few steps on fresh random token ids with a
fresh seed, so the check can train the same variants itself in a blink and compare."""

import torch


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    vocab_size = 7
    made = []
    for options in ({}, {"position": "rotary", "norm": "rms"}, {"position": "sinusoidal", "ffn": "swiglu"}):
        train = torch.randint(0, vocab_size, (80,), generator=g)
        validation = torch.randint(0, vocab_size, (25,), generator=g)
        settings = {
            "steps": 4,
            "seed": int(torch.randint(0, 10_000, (), generator=g)),
            "d_model": 8,
            "n_heads": 2,
            "n_layers": 1,
            "context": 6,
            "batch_size": 4,
            "peak_lr": 0.05,
        }
        made.append(("variant_loss", (vocab_size, train, validation), {**settings, **options}))
    return made

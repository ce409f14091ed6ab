"""The calls that judge causal_mask on sizes no program has seen: a single token, two, and a few
drawn afresh on every run, up to a dozen, so a table typed in for the six tokens of the sentence
shows."""

import torch

# The library's own causal masks: the exercise asks for the table to be built, not fetched.
BY_HAND = [
    "torch.nn.Transformer.generate_square_subsequent_mask",
    "torch.nn.modules.transformer._generate_square_subsequent_mask",
]


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    drawn = torch.randperm(10, generator=g)[:3] + 3  # three different sizes from 3 to 12
    return [("causal_mask", (n,)) for n in (1, 2, *sorted(int(n) for n in drawn))]

"""The calls that judge next_token_batch on texts no program has seen: each text is a shuffle of
distinct token ids, so every window of it names the place it starts. One tiny call, small enough to
print, a few larger ones with a seeded generator (whose starts the check can draw again), and one
without a generator."""

import torch

# The course's own sampler cuts its windows with Tensor.unfold; this exercise slices them by hand,
# so the operator is refused, and with it every shortcut through the finished sampler.
BY_HAND = ["torch.Tensor.unfold", "aten::unfold"]


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for length, batch_size, context in ((9, 2, 3), (40, 6, 5), (60, 8, 12), (25, 3, 1)):
        data = torch.randperm(length, generator=g) + 1
        sampler = torch.Generator().manual_seed(int(torch.randint(0, 10_000, (), generator=g)))
        made.append(("next_token_batch", (data, batch_size, context), {"generator": sampler}))
    made.append(("next_token_batch", (torch.randperm(30, generator=g) + 1, 4, 6)))
    return made

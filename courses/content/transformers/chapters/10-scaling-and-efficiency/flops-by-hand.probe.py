"""The calls that judge parameter_count, matmul_parameters and forward_flops on sizes no program
has seen: tiny ones whose every term can be checked on paper, middling ones, and some far too big
to build (a model the size of GPT-3), so the count has to come from the shapes."""

import torch

# PyTorch's counter is not the learner's, and neither are the course's finished formulas or a
# model to count.
BY_HAND = [
    "torch.utils.flop_counter.FlopCounterMode",
    "groundup.training_flops",
    "groundup.TinyGPT",
    "groundup.Block",
]


def _pick(g, low, high):
    return int(torch.randint(low, high + 1, (1,), generator=g))


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    sizes = [
        (_pick(g, 2, 9), 2 * _pick(g, 1, 3), 1, _pick(g, 2, 6)),  # on paper
        (_pick(g, 2, 9), 2 * _pick(g, 1, 3), _pick(g, 2, 3), _pick(g, 2, 6)),
        (_pick(g, 100, 5000), 16 * _pick(g, 1, 16), _pick(g, 1, 12), _pick(g, 16, 512)),
        (_pick(g, 30000, 60000), 128 * _pick(g, 60, 110), _pick(g, 60, 110), 2048),  # GPT-3's scale
    ]
    made = []
    for vocab_size, d_model, n_layers, max_len in sizes:
        made.append(("parameter_count", (vocab_size, d_model, n_layers, max_len)))
        made.append(("matmul_parameters", (vocab_size, d_model, n_layers)))
        batch, n = _pick(g, 1, 4), _pick(g, 2, max_len)
        made.append(("forward_flops", (vocab_size, d_model, n_layers, batch, n)))
    return made

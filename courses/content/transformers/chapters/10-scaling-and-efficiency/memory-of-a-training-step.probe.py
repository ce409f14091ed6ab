"""The calls that judge training_state_bytes, largest_trainable, attention_weights_bytes and
largest_batch on sizes no program has seen: models small enough to count on paper and ones of
GPT-3's size, every optimiser and three precisions, an optimiser that does not exist, memories that
are no whole number of parameters, and memories that hold the training state with room to spare,
barely, or not at all."""

import torch

# An optimiser to measure is not the learner's count: the three that PyTorch would build for them.
BY_HAND = ["torch.optim.AdamW", "torch.optim.Adam", "torch.optim.SGD"]


def _pick(g, low, high):
    return int(torch.randint(low, high + 1, (1,), generator=g))


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    small, big = _pick(g, 3, 40), _pick(g, 100, 180) * 10**9 + _pick(g, 1, 999)  # GPT-3 is 175 billion
    made = [
        ("training_state_bytes", (small,)),
        ("training_state_bytes", (small, "momentum", 2)),
        ("training_state_bytes", (_pick(g, 10**5, 10**8), "sgd", 8)),
        ("training_state_bytes", (big,), {"optimizer": "adamw", "bytes_per_number": 2}),
        ("training_state_bytes", (small, "rmsprop")),
    ]
    made += [
        ("largest_trainable", (_pick(g, 8, 200) * 10**9,)),
        ("largest_trainable", (_pick(g, 100, 999), "momentum", 4)),  # rarely a whole number of parameters
        ("largest_trainable", (_pick(g, 10**6, 10**9), "sgd", 2)),
    ]
    # (batch, heads, n, n_layers, bytes per number)
    for batch, heads, n, layers, size in (
        (_pick(g, 1, 3), _pick(g, 1, 3), _pick(g, 2, 5), 1, 4),
        (_pick(g, 2, 16), _pick(g, 2, 16), _pick(g, 64, 4096), _pick(g, 2, 96), 2),
    ):
        made.append(("attention_weights_bytes", (batch, heads, n, layers, size)))
    # largest_batch: (memory, n_params, n_layers, heads, n, optimizer, bytes per number)
    n_params, layers, heads, n = _pick(g, 10, 90), _pick(g, 1, 3), _pick(g, 1, 4), _pick(g, 2, 6)
    state = 16 * n_params  # AdamW in float32
    per_sequence = 4 * layers * heads * n * n
    room = state + _pick(g, 2, 9) * per_sequence + _pick(g, 1, per_sequence - 1)  # not a whole batch more
    made += [
        ("largest_batch", (room, n_params, layers, heads, n)),
        ("largest_batch", (state - _pick(g, 1, 15), n_params, layers, heads, n)),  # the state alone is too big
        ("largest_batch", (room, n_params, layers, heads, n, "sgd", 2)),
        ("largest_batch", (80 * 10**9, _pick(g, 1, 20) * 10**9, _pick(g, 12, 48), 16, 2048), {"bytes_per_number": 2}),
    ]
    return made

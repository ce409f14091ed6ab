"""The calls that judge sinusoid_table on sizes no program has seen: a tiny table whose numbers can
be read, one of a single pair of columns, and larger ones of several widths."""

import random

# The course module's finished encoding answers this exercise: it is not yours to call.
BY_HAND = ["groundup.sinusoidal_positions", "groundup.position_frequencies"]


def calls(seed):
    rng = random.Random(seed)
    sizes = [(rng.randint(3, 4), 4), (rng.randint(3, 6), 2)]
    sizes += [(rng.randint(10, 40), rng.choice((6, 10, 12))), (rng.randint(50, 90), rng.choice((16, 48, 64)))]
    return [("sinusoid_table", size) for size in sizes]

"""The calls that judge split_words, build_vocab, encode and decode on texts no program has seen:
short sentences of made-up words with capitals, digits, apostrophes, runs of punctuation and
several kinds of white space; token lists whose first-seen order is not the sorted order and that
repeat tokens; a text read as characters; a token missing from the vocabulary; ids given as a
tensor and as a list."""

import random

import torch

# What "by hand" rules out: the regular-expression module, which would do split_words in one call.
BY_HAND = [
    "re.findall",
    "re.finditer",
    "re.split",
    "re.sub",
    "re.subn",
    "re.search",
    "re.match",
    "re.fullmatch",
    "re.compile",
    "re._compile",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _word(rng):
    """A made-up word of 2 to 6 letters, sometimes with a digit or an apostrophe inside."""
    word = "".join(rng.choice(LETTERS) for _ in range(rng.randint(2, 6)))
    twist = rng.random()
    if twist < 0.15:
        word = word[:-1] + "'" + word[-1]
    elif twist < 0.25:
        word += str(rng.randint(0, 99))
    return word.capitalize() if rng.random() < 0.3 else word


def _text(rng, n_words):
    """Words joined by spaces, tabs or new lines, with punctuation glued to them: a comma or a
    full stop after a word, a bracket or a quote before one, and a "?!" or "--" on its own."""
    parts = []
    for i in range(n_words):
        word = _word(rng)
        roll = rng.random()
        if roll < 0.2:
            word += rng.choice(",.;:")
        elif roll < 0.3:
            word = rng.choice('("') + word
        parts.append(word)
        if i < n_words - 1:
            parts.append(rng.choice([" ", " ", " ", "  ", "\t", "\n", " ?! ", " -- ", "-"]))
    return "".join(parts)


def _tricky(rng):
    """A text on which a split at white space alone, a split that drops apostrophes or digits, a
    missing lower-casing and a run of punctuation kept whole all go wrong."""
    a, b, c = (rng.choice(LETTERS) * 2 + rng.choice(LETTERS) for _ in range(3))
    return f"{a.capitalize()} {b}'s  {c}2, ({a})?!\n{b.upper()}"


def _distinct(rng, n):
    words = set()
    while len(words) < n:
        words.add(_word(rng).lower())
    return list(words)


def _unsorted_with_repeats(rng, n):
    """n distinct tokens, first seen in an order that is not sorted, with repeats among them."""
    while True:
        words = _distinct(rng, n)
        rng.shuffle(words)
        if words != sorted(words):
            break
    tokens = []
    for word in words:
        tokens.append(word)
        tokens += [rng.choice(tokens) for _ in range(rng.randint(0, 2))]
    return tokens


def calls(seed):
    rng = random.Random(seed)
    made = [("split_words", (_tricky(rng),))]
    made += [("split_words", (_text(rng, n),)) for n in (4, 9)]
    made += [("split_words", ("",)), ("split_words", ("  \n\t ",))]

    tokens = _unsorted_with_repeats(rng, 4)
    made.append(("build_vocab", (tokens,)))
    made.append(("build_vocab", (_unsorted_with_repeats(rng, 9),)))
    chars = "".join(rng.choice("abcde .,") for _ in range(12))
    made.append(("build_vocab", (chars,)))

    vocab = sorted(set(tokens) | set(_distinct(rng, 3)))
    made.append(("encode", (tokens, vocab)))
    made.append(("encode", (chars, sorted(set(chars)))))
    made.append(("encode", ([], vocab)))
    missing = next(w for w in iter(lambda: _word(rng).lower(), None) if w not in vocab)
    made.append(("encode", (tokens[:2] + [missing] + tokens[2:3], vocab)))

    ids = torch.randint(0, len(vocab), (6,), generator=torch.Generator().manual_seed(seed % 2**32))
    made.append(("decode", (ids, vocab)))
    made.append(("decode", (ids.tolist()[::-1], vocab)))
    return made

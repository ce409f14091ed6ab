"""Judges split_words, build_vocab, encode and decode on the probe's fresh texts and token lists:
the right answer is worked out here from each call's own arguments, and the first call that
differs is shown to the learner with its input, what came back and what should have."""

import re

import torch

# What a tokenizer with one of the usual mistakes gives, each against the right one.
RIGHT = r"[a-z0-9']+|[^\sa-z0-9']"
SPLITS = [
    (
        r"[a-z0-9']+|[^\sa-z0-9']+",
        "A run of punctuation came out as one token: every punctuation mark is a token of its own, so '?!' gives two.",
    ),
    (r"[a-z0-9]+|[^\sa-z0-9]", 'The apostrophe split a word: it belongs to the word, as in "don\'t".'),
    (r"[a-z']+|[^\sa-z']", "The digits came off their word: digits are part of a word, as letters are."),
    (r"[a-z0-9']+", "The punctuation marks are gone: each one is a token of its own, never dropped."),
]


def _split(text: str, pattern: str = RIGHT, lower: bool = True) -> list[str]:
    return re.findall(pattern, text.lower() if lower else text)


def _tokens(value) -> list | None:
    """A list (or tuple) of strings as a list; None for anything else."""
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _short(items, limit: int = 14) -> str:
    items = list(items)
    if len(items) <= limit:
        return repr(items)
    return repr(items[:limit])[:-1] + f", ... ({len(items)} in all)]"


def _kind(value) -> str:
    if value is None:
        return "nothing yet: write its body"
    if isinstance(value, torch.Tensor):
        return f"a tensor of {str(value.dtype).removeprefix('torch.')}"
    return f"a {type(value).__name__}"


def _error(where: str, error: str, name: str) -> str:
    if "is not available here" in error:
        if error.startswith("RuntimeError: groundup."):
            return (
                f"{where} stopped: {error.removeprefix('RuntimeError: ')}. The course module's copy is not there "
                "while you do this exercise: write the function in your code."
            )
        return (
            f"{where} stopped: {error.removeprefix('RuntimeError: ')}. Walk through the characters with a for "
            "loop, and decide for each one whether it goes on the current word, ends it, or is a token alone."
        )
    if "defines no function" in error:
        return (
            f"{where}: {error}. Define it with def at the top level of your code, under that name: your function is "
            "called again in a fresh run that keeps only your imports, functions, classes and plain constants."
        )
    if error.startswith("NameError"):
        return (
            f"{where} raised {error}. Your function is called again in a fresh run that keeps only your imports, "
            "functions, classes and plain constants; compute anything else inside the function."
        )
    return f"{where} raised an error: {error}"


def _judge_split(call) -> str:
    (text,) = call.args
    where = f"split_words({text!r})"
    got, want = _tokens(call.value), _split(text)
    if got is None:
        return f"{where} returned {_kind(call.value)}; it should return a list of strings, one per token."
    if got == want:
        return ""
    shown = f"{where} returned {_short(got)}; the right tokens are {_short(want)}."
    if any(not token or any(ch.isspace() for ch in token) for token in got):
        return f"{shown} White space only separates tokens: no token is empty or holds a space, a tab or a new line."
    if got == text.split() or got == text.lower().split():
        return f"{shown} That is a split at white space alone: a punctuation mark glued to a word comes off as a token."
    if got == _split(text, lower=False) or got == _split(text, r"[a-zA-Z0-9']+|[^\sa-zA-Z0-9']", lower=False):
        return f"{shown} The capitals are still there: lower-case the text first, so 'The' and 'the' are one token."
    for pattern, said in SPLITS:
        if got == _split(text, pattern):
            return f"{shown} {said}"
    return shown


def _judge_vocab(call) -> str:
    (tokens,) = call.args
    where = f"build_vocab({tokens!r})"
    got, want = _tokens(call.value), sorted(set(tokens))
    if got is None:
        return f"{where} returned {_kind(call.value)}; it should return a list of strings, each distinct token once."
    if got == want:
        return ""
    shown = f"{where} returned {_short(got)}; the vocabulary is {_short(want)}."
    if len(got) > len(set(got)):
        return f"{shown} Some token is in it twice: each distinct token goes in once."
    if set(got) != set(want):
        return f"{shown} It should hold exactly the tokens that occur, no more and no fewer."
    if got == list(dict.fromkeys(tokens)):
        return (
            f"{shown} The tokens are in the order they first appear, so the same word would get another id in "
            "another text: sort them."
        )
    return f"{shown} It holds the right tokens, but not in sorted order."


def _judge_encode(call) -> str:
    tokens, vocab = call.args
    where = f"encode({tokens!r}, {vocab!r})"
    missing = [token for token in tokens if token not in vocab]
    if missing:
        return _judge_unknown(call, where, missing[0])
    want = torch.tensor([vocab.index(token) for token in tokens], dtype=torch.long)
    got = call.value
    if not isinstance(got, torch.Tensor):
        return f"{where} returned {_kind(got)}; it should return a tensor of int64 ids, one per token."
    if got.dtype != torch.long:
        dtype = str(got.dtype).removeprefix("torch.")
        said = (
            " A tensor made from an empty list is float32 unless you give it a dtype."
            if not tokens and got.is_floating_point()
            else ""
        )
        return f"{where} returned a tensor of {dtype}; ids are whole numbers, int64 (torch.long).{said}"
    if tuple(got.shape) != (len(tokens),):
        return (
            f"{where} returned a tensor of shape {tuple(got.shape)}; it should have one id per token: ({len(tokens)},)."
        )
    if torch.equal(got, want):
        return ""
    shown = f"{where} returned {got.tolist()}; the ids are {want.tolist()}."
    if torch.equal(got, want + 1):
        return f"{shown} Every id is one too high: the first token of the vocabulary has id 0."
    first_seen = list(dict.fromkeys(tokens))
    if got.tolist() == [first_seen.index(token) for token in tokens]:
        return f"{shown} Those are places in the order of first appearance; an id is the token's place in vocab."
    return f"{shown} A token's id is its place in vocab, counting from 0."


def _judge_unknown(call, where: str, token: str) -> str:
    if call.error:
        if call.error.startswith(("KeyError", "ValueError")):
            return "" if token in call.error else f"{where} raised {call.error}; say which token is missing: {token!r}."
        return _error(where, call.error, "encode")
    got = call.value
    if isinstance(got, torch.Tensor) and got.dim() == 1 and len(got) == len(call.args[0]) - 1:
        said = "it left the token out without a word"
    else:
        said = "it gave the token an id, although the vocabulary has no place for it"
    return (
        f"{where} returned {got.tolist() if isinstance(got, torch.Tensor) else _kind(got)}: {token!r} is not in "
        f"the vocabulary, and {said}. Raise a KeyError that names it instead: a model fed a text with a hole in "
        "it, or another word in its place, would never say so."
    )


def _judge_decode(call) -> str:
    ids, vocab = call.args
    shown_ids = ids.tolist() if isinstance(ids, torch.Tensor) else ids
    where = f"decode({'tensor(' + repr(shown_ids) + ')' if isinstance(ids, torch.Tensor) else repr(ids)}, {vocab!r})"
    got, want = _tokens(call.value), [vocab[int(i)] for i in shown_ids]
    if got is None:
        return f"{where} returned {_kind(call.value)}; it should return a list of strings, one token per id."
    if got == want:
        return ""
    return f"{where} returned {_short(got)}; the tokens are {_short(want)}: id i stands for vocab[i]."


JUDGES = {"split_words": _judge_split, "build_vocab": _judge_vocab, "encode": _judge_encode, "decode": _judge_decode}


def _judge(call) -> str:
    """The problem with one call, in words (empty: none)."""
    tokens = call.args[0]
    if call.function == "encode" and any(token not in call.args[1] for token in tokens):
        return JUDGES["encode"](call)
    if call.error:
        first = call.args[0]
        shown = f"tensor({first.tolist()!r})" if isinstance(first, torch.Tensor) else repr(first)
        rest = "".join(f", {arg!r}" for arg in call.args[1:])
        return _error(f"{call.function}({shown}{rest})", call.error, call.function)
    return JUDGES[call.function](call)


def check(ns, probed=None):
    if not probed:
        return False, "Your functions were not called on fresh inputs: run your program to the end without an error."
    for call in probed:
        problem = _judge(call)
        if problem:
            return False, problem
    texts = sum(call.function == "split_words" for call in probed)
    return True, (
        f"Your tokenizer is right on {texts} texts it had never seen, capitals, apostrophes, digits and runs of "
        "punctuation included; the vocabulary comes out sorted with each token once, encode gives int64 ids and "
        "refuses a token it does not know, and decode turns the ids back into the tokens."
    )

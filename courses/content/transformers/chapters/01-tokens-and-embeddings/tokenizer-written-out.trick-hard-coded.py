# The program's own answers, typed in: right on the printed text, nothing else.
import torch


def split_words(text):
    return ["the", "cat", "sat", "on", "the", "mat", ".", "the", "mat", "didn't", "mind", "!"]


def build_vocab(tokens):
    return ["!", ".", "cat", "didn't", "mat", "mind", "on", "sat", "the"]


def encode(tokens, vocab):
    if list(tokens) == ["the", "dog"]:
        raise KeyError("dog")
    return torch.tensor([8, 2, 7, 6, 8, 4, 1, 8, 4, 3, 5, 0])


def decode(ids, vocab):
    return ["the", "cat", "sat", "on", "the", "mat", ".", "the", "mat", "didn't", "mind", "!"]


text = "The cat sat on the mat. The mat didn't mind!"
tokens = split_words(text)
print("tokens:", tokens)
vocab = build_vocab(tokens) if tokens is not None else None
print("vocabulary:", vocab)
if tokens is None or vocab is None:
    print("split_words and build_vocab return nothing yet: write their bodies.")
else:
    ids = encode(tokens, vocab)
    print("ids:", ids)
    if ids is not None:
        print("decoded:", decode(ids, vocab))
    try:
        encode(["the", "dog"], vocab)
        print("'dog' is not in the vocabulary, yet encode did not complain")
    except KeyError as error:
        print("an unknown word is refused:", error)

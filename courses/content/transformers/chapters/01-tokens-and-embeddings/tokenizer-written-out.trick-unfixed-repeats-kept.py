# Sorted, but every occurrence kept: a word seen twice takes two places.
import torch


def split_words(text):
    tokens, word = [], ""
    for ch in text.lower():
        if "a" <= ch <= "z" or "0" <= ch <= "9" or ch == "'":
            word += ch  # the word goes on
            continue
        if word:  # any other character ends the word in progress
            tokens.append(word)
            word = ""
        if not ch.isspace():
            tokens.append(ch)  # a punctuation mark is a token of its own
    if word:
        tokens.append(word)
    return tokens


def build_vocab(tokens):
    return sorted(tokens)


def encode(tokens, vocab):
    ids = {token: i for i, token in enumerate(vocab)}  # token -> its place in the list
    out = []
    for token in tokens:
        if token not in ids:
            raise KeyError(token)
        out.append(ids[token])
    return torch.tensor(out, dtype=torch.long)


def decode(ids, vocab):
    return [vocab[int(i)] for i in ids]


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

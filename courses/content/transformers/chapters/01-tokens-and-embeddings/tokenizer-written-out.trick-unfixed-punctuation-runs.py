# A run of punctuation kept as one token ('?!').
import torch


def split_words(text):
    tokens, word, kind = [], "", None
    for ch in text.lower():
        now = None if ch.isspace() else ("word" if "a" <= ch <= "z" or "0" <= ch <= "9" or ch == "'" else "mark")
        if now != kind and word:
            tokens.append(word)
            word = ""
        if now:
            word += ch
        kind = now
    if word:
        tokens.append(word)
    return tokens


def build_vocab(tokens):
    return sorted(set(tokens))


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

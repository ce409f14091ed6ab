# The course module's finished pieces, imported under their own names.
import torch
from groundup import build_vocab, decode, encode, split_words

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

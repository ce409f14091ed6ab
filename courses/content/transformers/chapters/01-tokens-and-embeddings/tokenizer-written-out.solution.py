import torch


def split_words(text):
    """Cut a text into lower-cased words and single punctuation marks.

    Lower-case the text first. A word is a run of the letters a to z, the digits 0 to 9 and the
    apostrophe ("don't" stays one token). Any other character that is not white space is a token
    of its own, so "?!" gives two. White space (spaces, tabs, new lines) only separates tokens.
    Returns a list of strings.

    By hand: a loop over the characters; string methods are fine, the re module is not.
    """
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
    """The vocabulary: each distinct token once, in sorted order, as a list of strings.

    tokens: any sequence of strings; a str counts as the sequence of its characters.
    Sorting makes the ids independent of the order in which the tokens first appear.
    """
    return sorted(set(tokens))


def encode(tokens, vocab):
    """The id of each token: its place in vocab. Returns a tensor of shape (len(tokens),), int64.

    A token that is not in vocab raises a KeyError naming it: it is never left out, and never
    given some other token's id.
    """
    ids = {token: i for i, token in enumerate(vocab)}  # token -> its place in the list
    out = []
    for token in tokens:
        if token not in ids:
            raise KeyError(token)
        out.append(ids[token])
    return torch.tensor(out, dtype=torch.long)


def decode(ids, vocab):
    """The tokens that ids stand for, as a list of strings: encode's inverse.

    ids: a 1-D tensor or a list of whole numbers.
    """
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

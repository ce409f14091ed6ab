# The library's one-hot, made into floats.
import torch
import torch.nn.functional as F
from groundup import Vocab, split_words

torch.set_printoptions(precision=3, sci_mode=False)
torch.manual_seed(1)  # the same table on every run


def one_hot_rows(ids, vocab_size):
    """One row per position, all zeros but for a single 1 in the column of that position's id.
    ids: (n,) whole numbers from 0 to vocab_size - 1. Returns a float tensor (n, vocab_size)."""
    one_hot = torch.zeros(len(ids), vocab_size)
    one_hot = F.one_hot(ids, vocab_size).float()
    return one_hot


tokens = split_words("the cat sat on the mat")
vocab = Vocab(tokens)  # six positions, five different words
ids = vocab.encode(tokens)
table = torch.randn(len(vocab), 3)  # the embedding table: one row of width 3 per word

# The library's lookup: for every position, the row of the table that its id names.
looked_up = F.embedding(ids, table)

# The same thing by hand: multiplying the one-hot rows by the table keeps exactly one row of the
# table for each position.
one_hot = one_hot_rows(ids, len(vocab))
by_hand = one_hot @ table

print("vocabulary:", vocab.tokens)
print("ids:       ", ids.tolist())
print("one-hot rows:")
print(one_hot)
print("by hand:")
print(by_hand)
print("same as F.embedding:", torch.allclose(by_hand, looked_up))

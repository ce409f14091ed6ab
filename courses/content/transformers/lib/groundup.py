"""Transformers from the ground up: the pieces each part of the course builds, kept in one place
so that later parts (and Part 7's full block) reuse them instead of writing them again.

Part 1: Vocab and TokenEmbedding, from text to one vector per token.
"""

import re

import torch
from torch import nn

# Part 1: tokens and embeddings


def split_words(text: str) -> list[str]:
    """Lower-cased words and single punctuation marks: a tokenizer small enough to read."""
    return re.findall(r"[a-z0-9']+|[^\sa-z0-9']", text.lower())


class Vocab:
    """A fixed list of tokens; a token's id is its place in the list (sorted, so ids never
    depend on the order the tokens were first seen in)."""

    def __init__(self, tokens):
        self.tokens = sorted(set(tokens))
        self.ids = {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens) -> torch.Tensor:
        return torch.tensor([self.ids[token] for token in tokens], dtype=torch.long)

    def decode(self, ids) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


class TokenEmbedding(nn.Module):
    """One learned row of width d_model per token id; looking a token up selects its row."""

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        # Standard normal entries, as nn.Embedding starts them.
        self.table = nn.Parameter(torch.randn(vocab_size, d_model))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table[ids]  # (..., d_model): the same as one_hot(ids) @ table, without the zeros


# Part 2: attention by hand


def causal_mask(n: int) -> torch.Tensor:
    """(n, n) booleans, True where key j lies in query i's future (j > i): the scores to hide.
    The diagonal stays visible, so every row keeps at least one key (itself)."""
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False):
    """Scaled dot-product attention written out: (output, weights) for q, k, v of shape
    (..., n, d). The output matches F.scaled_dot_product_attention; the weights are returned too,
    because they are what a heat map shows."""
    scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5  # (..., n_q, n_k)
    if causal:
        scores = scores.masked_fill(causal_mask(scores.shape[-1])[: scores.shape[-2]], float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # each row sums to one
    return weights @ v, weights

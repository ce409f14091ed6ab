"""Transformers from the ground up: the pieces each part of the course builds, kept in one place
so that later parts (and Part 7's full block) reuse them instead of writing them again.

Part 1: Vocab and TokenEmbedding, from text to one vector per token.
Part 2: causal_mask and attention, written out step by step.
Part 3: sinusoidal_positions and rotate, two ways to tell the model where a token sits.
Part 4: FeedForward and SwiGLU, the per-position network.
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


# Part 3: positional information


def position_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """d_model // 2 angular frequencies, from 1 down to nearly 1 / base: one per pair of columns."""
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)


def sinusoidal_positions(n_positions: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """(n_positions, d_model): column 2i holds sin(p * f_i), column 2i + 1 holds cos(p * f_i)."""
    angles = torch.arange(n_positions, dtype=torch.float32)[:, None] * position_frequencies(d_model, base)
    pe = torch.empty(n_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def rotate(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding: turns each pair of columns (2i, 2i + 1) of the row for position
    p by the angle p * f_i. Applied to queries and keys, it makes their dot product depend only on
    how far apart the two positions are."""
    n, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(n)
    angles = positions.float()[:, None] * position_frequencies(d, base)  # (n, d / 2)
    cos, sin = torch.cos(angles), torch.sin(angles)
    first, second = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = first * cos - second * sin
    out[..., 1::2] = first * sin + second * cos
    return out


# Part 4: the feed-forward block


class FeedForward(nn.Module):
    """Expand, activate, contract: one small network applied to every position on its own.
    nn.Linear stores its weight as (out, in), so `expand.weight` is (hidden, d_model): the
    transpose of W1 in the course's formula x W1."""

    def __init__(self, d_model: int, hidden: int | None = None, activation: nn.Module | None = None):
        super().__init__()
        hidden = hidden or 4 * d_model
        self.expand = nn.Linear(d_model, hidden)
        self.activation = activation if activation is not None else nn.GELU()
        self.contract = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.contract(self.activation(self.expand(x)))


class SwiGLU(nn.Module):
    """The gated variant: SiLU of one projection times another, then contract. Three matrices, so
    the hidden width defaults to about two thirds of 4 * d_model to keep the parameter count."""

    def __init__(self, d_model: int, hidden: int | None = None):
        super().__init__()
        hidden = hidden or round(8 * d_model / 3)
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(nn.functional.silu(self.gate(x)) * self.up(x))

"""Transformers from the ground up: the pieces each part of the course builds, kept in one place
so that later parts (and Part 7's full block) reuse them instead of writing them again.

Part 1: split_words, build_vocab, encode and decode (which Vocab keeps together) and
        TokenEmbedding: from text to one vector per token.
Part 2: causal_mask and attention, written out step by step.
Part 3: sinusoidal_positions and rotate, two ways to tell the model where a token sits.
Part 4: gelu, feed_forward and swiglu, the per-position network, and FeedForward and SwiGLU
        around them.
Part 5: split_heads, merge_heads, multi_head_attention and MultiHeadAttention: heads side by side.
Part 6: layer_norm and rms_norm, and the LayerNorm and RMSNorm modules that call them, which keep
        the residual stream at a steady size.
Part 7: pre_norm_block and Block (a pre-norm decoder block), rotary_attention and RotaryAttention,
        TinyGPT (embeddings, a stack of blocks, logits),
        with options for the positions, feed-forward block and norm of Parts 3, 4 and 6, and
        to_torch_layer, the same block as PyTorch's nn.TransformerEncoderLayer.
Part 8: next_token_batch, token_losses, next_token_loss, text_loss, shrink_token_table,
        adamw_with_decay, lr_at and train_next_token: what it takes to train TinyGPT on a text.
Part 9: top_k_filter, top_p_filter and sample_next, which pick the next token from logits, and
        KVCache, cached_step and generate, which decode with or without a cache of keys and values,
        and continue_text, which turns a prompt into a model's continuation.
Part 10: parameter_count, matmul_parameters, forward_flops and training_flops, TinyGPT's size and
         cost by formula, training_state_bytes, the memory of weights, gradients and optimiser
         state, largest_trainable, the largest model that leaves room for it, attention_weights_bytes and largest_batch, how many sequences fit beside it,
         saved_bytes, the memory autograd keeps for the backward pass, and attention_saved_bytes,
         that memory for one attention call with either kernel.
"""

import math
import re

import torch
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

# Part 1: tokens and embeddings


def split_words(text: str) -> list[str]:
    """Lower-cased words and single punctuation marks: a tokenizer small enough to read. A word is
    a run of the letters a to z, the digits and the apostrophe; any other character that is not
    white space is a token of its own; white space only separates."""
    return re.findall(r"[a-z0-9']+|[^\sa-z0-9']", text.lower())


def build_vocab(tokens) -> list[str]:
    """The vocabulary: each distinct token once, sorted, so that ids never depend on the order the
    tokens were first seen in. `tokens` is any sequence of strings (a str gives its characters)."""
    return sorted(set(tokens))


def encode(tokens, vocab: list[str]) -> torch.Tensor:
    """(len(tokens),) int64 ids: each token's place in `vocab`. A token that is not in `vocab`
    raises a KeyError that names it, rather than being dropped or given another token's id."""
    ids = {token: i for i, token in enumerate(vocab)}
    return torch.tensor([ids[token] for token in tokens], dtype=torch.long)


def decode(ids, vocab: list[str]) -> list[str]:
    """The tokens that `ids` (a tensor or a list of whole numbers) stand for: encode's inverse."""
    return [vocab[int(i)] for i in ids]


class Vocab:
    """A fixed list of tokens; a token's id is its place in the list. The work is done by
    build_vocab, encode and decode above: this class only keeps the list between calls."""

    def __init__(self, tokens):
        self.tokens = build_vocab(tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens) -> torch.Tensor:
        return encode(tokens, self.tokens)

    def decode(self, ids) -> list[str]:
        return decode(ids, self.tokens)


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
    """Scaled dot-product attention written out: (output, weights) for q (..., n_q, d), k (..., n_k, d)
    and v (..., n_k, d_v), any leading axes carried through. With causal=True query i sees keys 0 to
    i. The output matches F.scaled_dot_product_attention; the weights are returned too, because
    they are what a heat map shows."""
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
    elif tuple(positions.shape) != (n,):  # a single position would otherwise apply to every row
        raise ValueError(f"positions has shape {tuple(positions.shape)}, but x has {n} rows")
    # (n, d / 2), made where x lives (a GPU, perhaps); it broadcasts over x's leading axes.
    angles = positions.to(x.device, torch.float32)[:, None] * position_frequencies(d, base).to(x.device)
    cos, sin = torch.cos(angles), torch.sin(angles)
    first, second = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = first * cos - second * sin
    out[..., 1::2] = first * sin + second * cos
    return out


# Part 4: the feed-forward block


def gelu(z: torch.Tensor) -> torch.Tensor:
    """The exact GELU of every number of z: z * Phi(z), Phi being the standard normal CDF, which
    the error function gives as (1 + erf(z / sqrt(2))) / 2. The same numbers as F.gelu's default."""
    return z * (1 + torch.erf(z / math.sqrt(2))) / 2


def feed_forward(x: torch.Tensor, w1, b1, w2, b2) -> torch.Tensor:
    """The feed-forward block on x (..., d): widen with w1 (d, h) and b1, bend every hidden number
    with gelu, narrow with w2 (h, d) and b2. The weights come in the formula's layout, x @ w1;
    FeedForward passes the transposes of what nn.Linear stores."""
    return gelu(x @ w1 + b1) @ w2 + b2


def swiglu(x: torch.Tensor, w_gate, w_up, w_down) -> torch.Tensor:
    """The gated block on x (..., d): SiLU of x @ w_gate, z * sigmoid(z), scales x @ w_up number by
    number, then w_down narrows. No biases; weights in the formula's layout, (in, out)."""
    gate = x @ w_gate
    return (gate * torch.sigmoid(gate) * (x @ w_up)) @ w_down


class FeedForward(nn.Module):
    """Expand, activate, contract: one small network applied to every position on its own, the
    arithmetic being feed_forward's. nn.Linear stores its weight as (out, in), so `expand.weight`
    is (hidden, d_model): the transpose of W1 in the course's formula x W1."""

    def __init__(self, d_model: int, hidden: int | None = None):
        super().__init__()
        hidden = hidden or 4 * d_model
        self.expand = nn.Linear(d_model, hidden)
        self.contract = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        expand, contract = self.expand, self.contract
        return feed_forward(x, expand.weight.T, expand.bias, contract.weight.T, contract.bias)


class SwiGLU(nn.Module):
    """The gated variant, the arithmetic being swiglu's. Three matrices, so the hidden width
    defaults to about two thirds of 4 * d_model to keep the parameter count."""

    def __init__(self, d_model: int, hidden: int | None = None):
        super().__init__()
        hidden = hidden or round(8 * d_model / 3)
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return swiglu(x, self.gate.weight.T, self.up.weight.T, self.down.weight.T)


# Part 5: multi-head attention


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(..., n, d_model) -> (..., n_heads, n, d_head): each head gets its own slice of the width.
    The reshape cuts every row into n_heads pieces; the transpose then puts the head axis in front
    of the token axis, so attention treats each head like one more batch entry."""
    *lead, n, d_model = x.shape
    return x.reshape(*lead, n, n_heads, d_model // n_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., n_heads, n, d_head) -> (..., n, n_heads * d_head): the inverse of split_heads, which
    lays each token's head outputs side by side again, head 0's columns first."""
    *lead, n_heads, n, d_head = x.shape
    return x.transpose(-3, -2).reshape(*lead, n, n_heads * d_head)


def multi_head_attention(x: torch.Tensor, q_proj, k_proj, v_proj, out_proj, n_heads: int, causal: bool = True):
    """(output, weights) of n_heads attention heads over x (..., n, d_model): each projection (a layer
    from d_model to d_model, such as nn.Linear) makes the queries, keys or values of all heads at
    once, split_heads hands each head its slice, attention runs on every head, merge_heads joins
    them and out_proj mixes them. The output is (..., n, d_model), the weights (..., n_heads, n, n)."""
    q, k, v = (split_heads(proj(x), n_heads) for proj in (q_proj, k_proj, v_proj))
    heads, weights = attention(q, k, v, causal=causal)
    return out_proj(merge_heads(heads)), weights


class MultiHeadAttention(nn.Module):
    """n_heads attention heads of width d_model / n_heads over one input, joined by an output
    projection, the arithmetic being multi_head_attention's. Four d_model x d_model matrices
    whatever the number of heads: 4 d^2 + 4 d parameters. Causal by default, as a decoder needs.
    After each call, `weights` holds the heads' attention maps, (batch, n_heads, n, n), for figures."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must split evenly into {n_heads} heads")
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.weights: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, causal: bool = True) -> torch.Tensor:
        projections = (self.q_proj, self.k_proj, self.v_proj, self.out_proj)
        out, weights = multi_head_attention(x, *projections, self.n_heads, causal=causal)
        self.weights = weights.detach()  # kept for plotting only; never part of the computation
        return out


def attention_flops(n: int, d_model: int) -> int:
    """Multiply-adds of one MultiHeadAttention call on n tokens, counted as 2 FLOPs each: the four
    projections (8 n d^2) plus scores and the weighted sum (4 n^2 d). The number of heads does not
    appear: heads split the width, they do not add work (the softmax, n^2 per head, is left out)."""
    return 8 * n * d_model**2 + 4 * n**2 * d_model


# Part 6: the residual stream and layer norm


def layer_norm(x: torch.Tensor, gain: torch.Tensor, shift: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Each row of x (..., d) minus its mean, divided by its standard deviation (the biased one,
    dividing by d, as nn.LayerNorm does), then times a gain and plus a shift, one per column."""
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + eps) * gain + shift


def rms_norm(x: torch.Tensor, gain: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Each row of x (..., d) divided by its root mean square, then times a gain: no mean, no
    shift. Matches nn.RMSNorm with the same eps."""
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gain


class LayerNorm(nn.Module):
    """layer_norm with a learned gain (`weight`, starting at one) and shift (`bias`, starting at
    zero), under the names nn.LayerNorm gives them, so weights copy straight across."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight, self.bias, self.eps)


class RMSNorm(nn.Module):
    """rms_norm with a learned gain (`weight`, starting at one). The norm of LLaMA and most recent
    models; matches nn.RMSNorm with the same eps."""

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


# Part 7: a full block, and a stack of them


def rotary_attention(x: torch.Tensor, attn: MultiHeadAttention, causal: bool = True) -> torch.Tensor:
    """Multi-head attention with the weights of `attn` (a MultiHeadAttention), whose queries and
    keys are turned by Part 3's rotate, head by head, before they are scored: position enters
    through the scores alone and the stream carries none. x: (batch, n, d_model) -> the same shape."""
    q, k, v = (split_heads(proj(x), attn.n_heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
    heads, _ = attention(rotate(q), rotate(k), v, causal=causal)  # the values are not turned
    return attn.out_proj(merge_heads(heads))


class RotaryAttention(MultiHeadAttention):
    """MultiHeadAttention whose forward pass is rotary_attention: the same four projections under
    the same names, so only what happens to the queries and keys differs (its `weights` stay None)."""

    def forward(self, x: torch.Tensor, causal: bool = True) -> torch.Tensor:
        return rotary_attention(x, self, causal)


def pre_norm_block(x: torch.Tensor, norm1, attn, norm2, ffn) -> torch.Tensor:
    """The pre-norm arrangement: attention reads norm1 of the stream and adds to it, then the
    feed-forward block reads norm2 of the result and adds to that. The stream itself is never
    normalised, and attention is causal, as a decoder's must be."""
    h = x + attn(norm1(x), causal=True)
    return h + ffn(norm2(h))


def _check_choice(option: str, value, choices) -> None:
    """A ValueError naming the choices when `value` is not one of them."""
    if value not in choices:
        raise ValueError(f"{option} must be one of {', '.join(map(repr, choices))}, not {value!r}")


class Block(nn.Module):
    """A pre-norm decoder block: each sublayer reads a normalised copy of the residual stream and
    adds its result back; the stream itself is never normalised inside the block. The defaults are
    GPT-2's choices; ffn="swiglu" (Part 4), norm="rms" (Part 6) and rotary=True (Part 3, turning
    the queries and keys inside attention) are the newer ones, which Part 8 compares."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        hidden: int | None = None,
        *,
        ffn: str = "gelu",
        norm: str = "layer",
        rotary: bool = False,
    ):
        super().__init__()
        _check_choice("ffn", ffn, ("gelu", "swiglu"))
        _check_choice("norm", norm, ("layer", "rms"))
        make_norm = LayerNorm if norm == "layer" else RMSNorm
        self.norm1 = make_norm(d_model)
        self.attn = RotaryAttention(d_model, n_heads) if rotary else MultiHeadAttention(d_model, n_heads)
        self.norm2 = make_norm(d_model)
        self.ffn = FeedForward(d_model, hidden) if ffn == "gelu" else SwiGLU(d_model, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pre_norm_block(x, self.norm1, self.attn, self.norm2, self.ffn)


def to_torch_layer(block: Block) -> nn.TransformerEncoderLayer:
    """The same block as PyTorch's own layer, with the weights copied over: nn.MultiheadAttention
    packs the query, key and value projections into one (3 d, d) matrix, in that order. Call it
    with a causal mask, e.g. layer(x, src_mask=causal_mask(n), is_causal=True). PyTorch's layer has
    layer norms, a GELU feed-forward block and no rotary turn: only a default Block has a twin."""
    if isinstance(block.attn, RotaryAttention) or not hasattr(block.ffn, "expand") or not hasattr(block.norm1, "bias"):
        raise ValueError("only a Block with the default options (layer norms, GELU, no rotary) matches PyTorch's layer")
    d_model = block.norm1.weight.shape[0]
    layer = nn.TransformerEncoderLayer(
        d_model,
        block.attn.n_heads,
        dim_feedforward=block.ffn.expand.out_features,
        dropout=0.0,
        activation="gelu",
        batch_first=True,
        norm_first=True,
    )
    attn = block.attn
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]))
        layer.self_attn.in_proj_bias.copy_(torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]))
        pairs = [
            (layer.self_attn.out_proj, attn.out_proj),
            (layer.linear1, block.ffn.expand),
            (layer.linear2, block.ffn.contract),
            (layer.norm1, block.norm1),
            (layer.norm2, block.norm2),
        ]
        for theirs, ours in pairs:
            theirs.weight.copy_(ours.weight)
            theirs.bias.copy_(ours.bias)
    return layer.eval()


class TinyGPT(nn.Module):
    """Token rows plus learned position rows start the residual stream; n_layers blocks add to
    it; a final LayerNorm and the token table itself (weight tying) turn each position into
    logits over the vocabulary. With GPT-2 small's sizes it has GPT-2 small's 124,439,808
    parameters.

    The keywords swap in the other choices of earlier parts, for Part 8 to compare:
    position="sinusoidal" adds Part 3's fixed sinusoids instead of learned rows (no parameters),
    position="rotary" adds nothing to the stream and turns the queries and keys inside every
    block's attention instead; ffn="swiglu" uses Part 4's gated block; norm="rms" uses RMSNorm in
    the blocks and before the output."""

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        n_heads: int,
        n_layers: int,
        max_len: int,
        *,
        position: str = "learned",
        ffn: str = "gelu",
        norm: str = "layer",
    ):
        super().__init__()
        _check_choice("position", position, ("learned", "sinusoidal", "rotary"))
        _check_choice("ffn", ffn, ("gelu", "swiglu"))
        _check_choice("norm", norm, ("layer", "rms"))
        self.options = {"position": position, "ffn": ffn, "norm": norm}
        self.max_len = max_len
        self.tokens = TokenEmbedding(vocab_size, d_model)
        if position == "learned":
            # Small random rows, as GPT-2 starts them.
            self.positions = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        elif position == "sinusoidal":
            # A fixed table: a buffer moves with the model (.to(device)) but is not trained or saved.
            self.register_buffer("positions", sinusoidal_positions(max_len, d_model), persistent=False)
        else:
            self.positions = None  # rotary: position enters inside attention, not the stream
        rotary = position == "rotary"
        self.blocks = nn.ModuleList(Block(d_model, n_heads, ffn=ffn, norm=norm, rotary=rotary) for _ in range(n_layers))
        self.norm = LayerNorm(d_model) if norm == "layer" else RMSNorm(d_model)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """(..., n) token ids -> (..., n, d_model): the residual stream before the first block."""
        if self.positions is None:
            return self.tokens(ids)
        return self.tokens(ids) + self.positions[: ids.shape[-1]]

    def head(self, x: torch.Tensor) -> torch.Tensor:
        """The residual stream after the last block -> logits, one score per vocabulary entry."""
        return self.norm(x) @ self.tokens.table.T

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


# Part 8: training the model


def next_token_batch(data: torch.Tensor, batch_size: int, context: int, generator: torch.Generator | None = None):
    """(inputs, targets), each (batch_size, context): windows of `context` token ids starting at
    random places in `data`, and the same windows moved one token to the right. targets[b, t] is
    the token that follows inputs[b, t], so one forward pass makes `context` predictions per row."""
    starts = torch.randint(0, len(data) - context, (batch_size,), generator=generator)
    # Every window of context + 1 tokens, as a view of `data` (row i starts at token i): a row's
    # first `context` tokens are the inputs and its last `context` the targets.
    windows = data.unfold(0, context + 1, 1)[starts]
    return windows[:, :-1], windows[:, 1:]


def token_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The loss of each prediction on its own: logits (..., vocab) against targets (...) gives (...),
    minus the log-probability each row of logits gives the id its target names. F.cross_entropy
    wants one row of scores per prediction, so every axis but the last is flattened, then put back."""
    vocab = logits.shape[-1]
    losses = nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1), reduction="none")
    return losses.reshape(targets.shape)


def next_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of every prediction: logits (..., vocab) against targets (...), one number.
    F.cross_entropy wants one row of scores per prediction, so every axis but the last is flattened."""
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def text_loss(model: nn.Module, data: torch.Tensor, context: int) -> float:
    """The model's mean next-token loss over the whole of `data`, cut into consecutive windows of
    `context` tokens (the tail that does not fill a window is left out). Random batches give a
    noisy loss; this one is the same every time it is measured on the same weights."""
    windows = (len(data) - 1) // context
    inputs = data[: windows * context].view(windows, context)
    targets = data[1 : windows * context + 1].view(windows, context)
    was_training = model.training
    model.eval()
    loss = next_token_loss(model(inputs), targets).item()
    model.train(was_training)
    return loss


@torch.no_grad()
def shrink_token_table(model: nn.Module, std: float = 0.05) -> None:
    """Redraw TinyGPT's token table with a small standard deviation before training. Part 7 starts
    it at 1, as nn.Embedding does, but with weight tying the same table scores the output, and at
    that scale the first logits are so large that the first loss is many times ln(vocab)."""
    model.tokens.table.normal_(0.0, std)


def adamw_with_decay(model: nn.Module, lr: float, weight_decay: float = 0.1) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices only: norms' gains and shifts and the biases are
    left alone, since pulling a gain towards zero would fight the very scale a norm sets."""
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": matrices, "weight_decay": weight_decay}, {"params": vectors, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def lr_at(step: int, *, peak: float, warmup: int, total: int, floor: float = 0.1) -> float:
    """Learning rate for step 0 .. total - 1: a straight climb to `peak` over `warmup` steps, then
    half a cosine down to `floor * peak` at the last step. The climb keeps the first updates small
    while Adam's running averages are still guesses; the descent lets the model settle."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - 1 - warmup)  # 0 after the warm-up, 1 at the last step
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def train_next_token(
    model: nn.Module,
    data: torch.Tensor,
    *,
    steps: int,
    batch_size: int = 32,
    context: int = 32,
    peak_lr: float = 1e-2,
    warmup: int | None = None,
    seed: int = 0,
) -> list[float]:
    """The whole loop: sample a batch, score it, step AdamW at the scheduled rate, with the
    gradient's length clipped to 1 so one bad batch cannot throw the weights far. Returns the
    loss of every step, for a curve."""
    generator = torch.Generator().manual_seed(seed)
    warmup = max(1, steps // 10) if warmup is None else warmup
    optimizer = adamw_with_decay(model, peak_lr)
    losses = []
    model.train()
    for step in range(steps):
        inputs, targets = next_token_batch(data, batch_size, context, generator)
        loss = next_token_loss(model(inputs), targets)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, peak=peak_lr, warmup=warmup, total=steps)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


# Part 9: decoding


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Every logit below a row's k-th largest set to -inf, so the softmax gives it nothing. Ties
    with the k-th are all kept: which of two equal tokens to drop is not ours to decide."""
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filter: keep the most likely tokens until their probabilities add up to at least p,
    set the rest to -inf. The most likely token always stays, so a row is never emptied."""
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs  # what the tokens ranked above each one already hold
    drop = (mass_before >= p).scatter(-1, order, mass_before >= p)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None) -> torch.Tensor:
    """One token id per row of logits (..., vocab). Temperature 0 means greedy: the argmax, no
    randomness. Otherwise divide by the temperature, filter, and draw; the same generator state
    gives the same draw, which is what makes sampled text repeatable."""
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1, generator=generator).view(probs.shape[:-1])


class KVCache:
    """The keys and values every block has computed so far, (batch, n_heads, n, d_head) each. A
    causal model never changes them once a position is past, so they are kept, not recomputed."""

    def __init__(self):
        self.keys: list[torch.Tensor] = []  # one tensor per block, filled by the first step
        self.values: list[torch.Tensor] = []

    def __len__(self) -> int:
        return self.keys[0].shape[2] if self.keys else 0  # positions cached so far


def cached_step(model: TinyGPT, ids: torch.Tensor, cache: KVCache) -> torch.Tensor:
    """Logits for the new token ids (batch, m) that follow the len(cache) positions already in the
    cache; their keys and values are appended. The first call passes the whole prompt. A cache
    holds at most the model's max_len positions: a step that would go past them raises."""
    start, m = len(cache), ids.shape[-1]
    if model.positions is None:  # rotary: each step would have to turn its new queries and keys
        raise ValueError("cached_step serves a model with a position table; a rotary TinyGPT runs without the cache")
    if start + m > model.positions.shape[0]:
        raise ValueError(
            f"{start} cached + {m} new tokens is more than the model's {model.positions.shape[0]} positions"
        )
    x = model.tokens(ids) + model.positions[start : start + m]  # positions continue, not restart
    for i, block in enumerate(model.blocks):
        attn = block.attn
        h = block.norm1(x)
        q, k, v = (split_heads(proj(h), attn.n_heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
        if i < len(cache.keys):
            k, v = torch.cat([cache.keys[i], k], dim=2), torch.cat([cache.values[i], v], dim=2)
            cache.keys[i], cache.values[i] = k, v
        else:
            cache.keys.append(k)
            cache.values.append(v)
        # The m new queries are the last m of start + m positions: query j may see keys up to start + j.
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
        scores = scores.masked_fill(causal_mask(start + m)[start:], float("-inf"))
        x = x + attn.out_proj(merge_heads(torch.softmax(scores, dim=-1) @ v))
        x = x + block.ffn(block.norm2(x))
    return model.head(x)


@torch.no_grad()
def generate(model: TinyGPT, ids, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    """ids (batch, n) followed by n_new tokens, chosen one at a time by sample_next. The model has
    max_len positions, so it reads at most the last max_len tokens: a longer text is cropped, and
    its oldest tokens drop out of view. With the cache each step feeds the model one token while the
    text fits. Past max_len every kept token moves one position back at each step, so the cached
    keys and values no longer belong to their positions: each step then runs the last max_len
    tokens again, as it does without the cache. Both ways compute the same logits, so the same
    generator gives the same tokens."""
    max_len = model.max_len
    # A rotary model turns queries and keys inside attention, which cached_step does not: no cache.
    cache = KVCache() if use_cache and model.positions is not None and ids.shape[-1] <= max_len else None
    logits = cached_step(model, ids, cache) if cache is not None else model(ids[:, -max_len:])
    for step in range(n_new):
        next_id = sample_next(logits[:, -1], temperature, top_k, top_p, generator)
        ids = torch.cat([ids, next_id[:, None]], dim=1)
        if step == n_new - 1:
            break  # the last token's logits would never be used
        if cache is not None and len(cache) < max_len:
            logits = cached_step(model, next_id[:, None], cache)
        else:
            logits = model(ids[:, -max_len:])  # the window: the last max_len tokens
    return ids


def continue_text(model: TinyGPT, vocab: Vocab, text: str, n_new: int, **settings) -> str:
    """The n_new characters a model trained on characters writes after `text`, chosen by generate
    with the given settings (temperature, top_k, top_p, generator, use_cache)."""
    ids = vocab.encode(text)[None]  # a string is a sequence of characters: (1, len(text))
    return "".join(vocab.decode(generate(model, ids, n_new, **settings)[0, len(text) :]))


# Part 10: scaling and efficiency


def parameter_count(vocab_size: int, d_model: int, n_layers: int, max_len: int) -> int:
    """Every parameter of TinyGPT, counted from the shapes: per block two LayerNorms (a gain and a
    shift each, 4 d), four attention projections with biases (4 d^2 + 4 d) and the feed-forward
    block, d -> 4 d -> d with biases (8 d^2 + 5 d); then the token table, the position table and
    the final LayerNorm. The output reuses the token table, so it adds nothing."""
    per_block = 12 * d_model**2 + 13 * d_model
    return n_layers * per_block + vocab_size * d_model + max_len * d_model + 2 * d_model


def matmul_parameters(vocab_size: int, d_model: int, n_layers: int) -> int:
    """The parameters of TinyGPT that take part in a matrix product: per block the four attention
    matrices (4 d^2) and the two feed-forward matrices (8 d^2), plus the tied token table, which
    scores every position at the output. Biases, norms and the position table only add, so they
    cost next to nothing and are left out."""
    return n_layers * 12 * d_model**2 + vocab_size * d_model


def forward_flops(vocab_size: int, d_model: int, n_layers: int, batch: int, n: int) -> int:
    """Matrix-product FLOPs of one TinyGPT forward pass on `batch` sequences of n tokens: two per
    matmul parameter per token, plus attention's scores and blend (4 n^2 d per layer and sequence).
    It equals torch.utils.flop_counter.FlopCounterMode's count exactly, since that counter also
    counts only matrix products."""
    tokens = batch * n
    return 2 * matmul_parameters(vocab_size, d_model, n_layers) * tokens + n_layers * batch * 4 * n**2 * d_model


def training_flops(vocab_size: int, d_model: int, n_layers: int, batch: int, n: int) -> int:
    """One training step, forward and backward: every product of the forward pass needs two of the
    same size on the way back (one for the gradient of each operand), so three forwards in all.
    Without the attention term this is the familiar 6 N FLOPs per token."""
    return 3 * forward_flops(vocab_size, d_model, n_layers, batch, n)


def training_state_bytes(n_params: int, optimizer: str = "adamw", bytes_per_number: int = 4) -> dict[str, int]:
    """The bytes a training step holds for a model of n_params parameters before it reads a single
    token: the weights, a gradient for each, and the optimiser's state, every number stored in
    bytes_per_number bytes (4 in float32, 2 in bfloat16). Plain "sgd" keeps no state, "momentum"
    one running average per weight, "adamw" two (of the gradient and of its square). Returns
    {"weights", "gradients", "optimizer", "total"}; another optimizer is a ValueError."""
    averages = {"sgd": 0, "momentum": 1, "adamw": 2}
    if optimizer not in averages:
        raise ValueError(f"optimizer must be one of {', '.join(map(repr, averages))}, not {optimizer!r}")
    weights = n_params * bytes_per_number
    state = averages[optimizer] * weights
    return {"weights": weights, "gradients": weights, "optimizer": state, "total": 2 * weights + state}


def largest_trainable(memory_bytes: int, optimizer: str = "adamw", bytes_per_number: int = 4) -> int:
    """The most parameters whose training state (training_state_bytes) fits in memory_bytes, with
    not a byte left for activations: the memory over what one parameter costs, rounded down."""
    return memory_bytes // training_state_bytes(1, optimizer, bytes_per_number)["total"]


def attention_weights_bytes(batch: int, heads: int, n: int, n_layers: int, bytes_per_number: int = 4) -> int:
    """The bytes of the attention weights that the math kernel keeps for the backward pass: an
    n x n table per head, per sequence and per layer."""
    return n_layers * batch * heads * n * n * bytes_per_number


def largest_batch(
    memory_bytes: int,
    n_params: int,
    n_layers: int,
    heads: int,
    n: int,
    optimizer: str = "adamw",
    bytes_per_number: int = 4,
) -> int:
    """The most sequences of n tokens one training step can take when memory_bytes holds the
    training state (training_state_bytes) and the attention weights of every sequence
    (attention_weights_bytes), the rest of the activations not counted; 0 when the state alone
    does not fit."""
    left = memory_bytes - training_state_bytes(n_params, optimizer, bytes_per_number)["total"]
    return max(left, 0) // attention_weights_bytes(1, heads, n, n_layers, bytes_per_number)


def saved_bytes(fn, *args, ignore=()) -> int:
    """Run fn(*args) and return how many bytes autograd keeps for the backward pass: the
    activations that stay in memory until backward() frees them. Several saved tensors can share
    one block of memory (a view of a weight, the same tensor saved twice), so each block is
    counted once. Blocks of the tensors in `ignore` are skipped: pass model.parameters() to count
    activations only, since the weights are in memory whether or not a backward pass follows."""
    skipped = {t.untyped_storage().data_ptr() for t in ignore}
    blocks = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in skipped:
            blocks[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return sum(blocks.values())


def attention_saved_bytes(batch: int, heads: int, n: int, d_head: int, fused: bool) -> int:
    """The bytes one causal attention call keeps for the backward pass, measured by saved_bytes on
    random queries, keys and values of shape (batch, heads, n, d_head): with the MATH kernel, which
    keeps the n x n weights of every head, or (fused=True) with the CPU's fused kernel, which keeps
    its inputs, its output and one number per query row."""
    q, k, v = (torch.randn(batch, heads, n, d_head, requires_grad=True) for _ in range(3))
    backend = SDPBackend.FLASH_ATTENTION if fused else SDPBackend.MATH
    with sdpa_kernel(backend):
        return saved_bytes(lambda q, k, v: nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)

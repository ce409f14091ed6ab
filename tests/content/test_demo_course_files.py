"""The demo course folder holds what the course promises: the outline, two written parts, quizzes
and a vocabulary every chapter can link to. Plain file checks, no database."""

import re

import yaml

from tests.content.course_files import (
    COURSE_DIR,
    EXERCISE_LINE_RE,
    PYTHON_LISTING_RE,
    chapter_folders,
    chapter_read,
    glossary_read,
    prose,
    quiz_read,
    term_references,
    written_chapter_folders,
)

WRITTEN = {
    2: ("attention-by-hand", "Attention by hand", ["one-query-three-keys", "a-mask-that-hides-the-future"]),
    4: ("feed-forward-block", "The feed-forward block", ["a-feed-forward-pass", "three-activations-compared"]),
}
SECTIONS = {
    "attention-by-hand": [
        "Three vectors per token",
        "Scores, scale, softmax",
        "The fused version",
        "A weighted average, not a lookup",
        "What the weights do not mean",
    ],
    "feed-forward-block": [
        "Position-wise means independent",
        "Expand, activate, contract",
        "The block as two linears",
        "What the block computes",
        "GELU and the gated variants",
    ],
}


def test_it_describes_the_course_for_the_catalog():
    course = yaml.safe_load((COURSE_DIR / "course.yaml").read_text())
    assert course["slug"] == "transformers-from-the-ground-up"
    assert course["title"] == "Transformers from the ground up"
    assert course["level"] == "advanced"
    assert course["published"] is True
    assert len(course["summary"].split()) > 20


def test_it_outlines_ten_parts_with_only_parts_two_and_four_written():
    folders = chapter_folders()
    assert [folder.name[:2] for folder in folders] == [f"{n:02d}" for n in range(1, 11)]
    for number, folder in enumerate(folders, start=1):
        front, body = chapter_read(folder)
        assert folder.name == f"{number:02d}-{front['slug']}"
        assert front["title"] and front["summary"] and front["lede"]
        if number in WRITTEN:
            slug, title, _ = WRITTEN[number]
            assert (front["slug"], front["title"], front["published"]) == (slug, title, True)
        else:
            assert front["published"] is False
            assert body.strip() == ""  # coming soon: listed in the outline, nothing to open


def test_it_covers_every_section_of_the_written_parts_in_order():
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        headings = re.findall(r"^## (.+)$", prose(body), re.MULTILINE)
        assert headings == SECTIONS[front["slug"]]


def test_it_gives_each_written_part_a_listing_a_callout_and_math():
    listings = {}
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        code = [m.group("code") for m in PYTHON_LISTING_RE.finditer(body)]
        assert len(code) == 1, front["slug"]
        listings[front["slug"]] = code[0]
        assert re.search(r'^!!! note ".+"\n    \S', body, re.MULTILINE), front["slug"]
        assert re.search(r"^\$\$\n.+\n\$\$$", body, re.MULTILINE), front["slug"]
        assert re.search(r"[^$]\$[^$\s][^$]*\$", prose(body)), front["slug"]
    assert "F.scaled_dot_product_attention(q, k, v, is_causal=True)" in listings["attention-by-hand"]
    assert "nn.Sequential(" in listings["feed-forward-block"]
    assert "nn.GELU()" in listings["feed-forward-block"]


def test_it_places_every_exercise_exactly_once_in_the_order_of_the_front_matter():
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        number = int(folder.name[:2])
        slugs = [exercise["slug"] for exercise in front["exercises"]]
        assert slugs == WRITTEN[number][2]
        assert EXERCISE_LINE_RE.findall(body) == slugs
        for exercise in front["exercises"]:
            assert exercise["title"] and exercise["instructions"].strip()
            for suffix in (".py", ".check.py", ".solution.py"):
                assert (folder / f"{exercise['slug']}{suffix}").is_file()


def test_it_defines_the_37_terms_of_the_course_vocabulary_once_each():
    glossary = glossary_read()
    terms = [entry["term"].lower() for entry in glossary]
    assert len(terms) == len(set(terms)) == 37
    for entry in glossary:
        assert entry["definition"].strip().endswith(".")
        assert entry["definition"].count(". ") == 0  # one plain sentence


def test_it_links_only_to_terms_of_the_glossary_and_often():
    terms = {entry["term"].lower() for entry in glossary_read()}
    for folder in written_chapter_folders():
        references = term_references(chapter_read(folder)[1])
        assert len(references) >= 10, folder.name
        unknown = {ref for ref in references if ref.lower() not in terms}
        assert not unknown, f"{folder.name} links to terms the glossary lacks: {unknown}"


def test_it_asks_five_questions_per_written_part_with_one_right_answer_and_every_choice_explained():
    for folder in written_chapter_folders():
        questions = quiz_read(folder)
        assert len(questions) == 5, folder.name
        for question in questions:
            choices = question["choices"]
            assert question["prompt"].strip()
            assert len(choices) == 4
            assert sum(1 for choice in choices if choice.get("correct") is True) == 1
            assert all(choice["text"] and choice["explanation"].strip() for choice in choices)
    first_prompts = [quiz_read(folder)[0]["prompt"] for folder in written_chapter_folders()]
    assert first_prompts == [
        "What does the query vector represent?",
        "What does position-wise mean for the feed-forward block?",
    ]

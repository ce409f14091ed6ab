"""The demo course folder holds what the course promises: the outline, the written parts, quizzes
and a vocabulary every chapter can link to. Plain file checks, no database.

Every expectation is read from the course files (which parts are published, their exercises,
quizzes and terms), so publishing a new part breaks no test here: it is checked like the others."""

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

# The course's own rule for every published part (issue 13): one quiz of this many questions.
QUIZ_QUESTIONS = 5


def test_it_describes_the_course_for_the_catalog():
    course = yaml.safe_load((COURSE_DIR / "course.yaml").read_text())
    assert course["slug"] == "transformers-from-the-ground-up"
    assert course["title"] == "Transformers from the ground up"
    assert course["level"] == "advanced"
    assert course["published"] is True
    assert len(course["summary"].split()) > 20


def test_it_outlines_the_parts_in_order_with_only_the_published_ones_written():
    folders = chapter_folders()
    assert [int(folder.name[:2]) for folder in folders] == list(range(1, len(folders) + 1))
    assert written_chapter_folders(), "at least one part is published"
    for folder in folders:
        front, body = chapter_read(folder)
        assert folder.name == f"{folder.name[:2]}-{front['slug']}"
        assert front["title"] and front["summary"] and front["lede"]
        if front.get("published"):
            assert body.strip(), folder.name
        else:
            assert front["published"] is False
            assert body.strip() == ""  # coming soon: listed in the outline, nothing to open


def test_it_gives_each_written_part_its_own_sections():
    for folder in written_chapter_folders():
        headings = re.findall(r"^## (.+)$", prose(chapter_read(folder)[1]), re.MULTILINE)
        assert len(headings) >= 3, folder.name
        assert len(set(headings)) == len(headings), folder.name


def test_it_gives_each_written_part_a_listing_and_maths():
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        assert PYTHON_LISTING_RE.search(body), front["slug"]
        assert re.search(r"^\$\$\n.+\n\$\$$", body, re.MULTILINE), front["slug"]
        assert re.search(r"[^$]\$[^$\s][^$]*\$", prose(body)), front["slug"]


def test_it_places_every_exercise_exactly_once_in_the_order_of_the_front_matter():
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        slugs = [exercise["slug"] for exercise in front["exercises"]]
        assert len(slugs) >= 2, folder.name
        assert EXERCISE_LINE_RE.findall(body) == slugs
        for exercise in front["exercises"]:
            assert exercise["title"] and exercise["instructions"].strip()
            for suffix in (".py", ".check.py", ".solution.py"):
                assert (folder / f"{exercise['slug']}{suffix}").is_file()


def test_it_defines_each_term_of_the_course_vocabulary_once():
    glossary = glossary_read()
    terms = [entry["term"].lower() for entry in glossary]
    assert terms and len(terms) == len(set(terms))
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


def test_it_asks_each_written_part_its_quiz_with_one_right_answer_and_every_choice_explained():
    for folder in written_chapter_folders():
        questions = quiz_read(folder)
        assert len(questions) == QUIZ_QUESTIONS, folder.name
        for question in questions:
            choices = question["choices"]
            assert question["prompt"].strip()
            assert 2 <= len(choices) <= 6
            assert sum(1 for choice in choices if choice.get("correct") is True) == 1
            assert all(choice["text"] for choice in choices)
            assert all(choice["explanation"].strip() for choice in choices if not choice.get("correct"))

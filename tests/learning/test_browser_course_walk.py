"""A learner walks the whole published course in a real browser, part by part, in order: reads each
part, types each exercise's reference solution into the editor, runs it and sees its check pass,
sees each figure the code draws, answers the quiz and sees the part complete. At the end the
course's completion page shows every part complete, and the code package it offers, downloaded and
unpacked, runs every exercise with the project's Python outside the platform.

Everything comes from the course folder (courses/content/transformers): which parts are published,
their sections, exercises, solutions and right answers, so a newly published part is walked too.
The runs go through the web app under uvicorn, a real Celery worker and the local sandbox.
A screenshot of each exercise's output and of each part's figures goes to test-artifacts/ for a
person to look at.
"""

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.content.course_files import (
    PYTHON_LISTING_RE,
    chapter_read,
    prose,
    quiz_read,
    written_chapter_folders,
)
from tests.learning.browser_support import ARTIFACTS, demo_course, sign_up
from tests.learning.completion_support import python_outside

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 90_000  # only stops a hung test: a cold run takes seconds on a busy machine
DRAWS_RE = re.compile(r"^\s*(import matplotlib|from matplotlib)", re.MULTILINE)


@dataclass
class Exercise:
    slug: str
    title: str
    solution: str

    @property
    def draws(self) -> bool:
        return bool(DRAWS_RE.search(self.solution))


@dataclass
class Part:
    number: int
    slug: str
    title: str
    headings: int
    exercises: list[Exercise]
    right_answers: list[str]


def _parts_from_files() -> list[Part]:
    parts = []
    for folder in written_chapter_folders():
        front, body = chapter_read(folder)
        without_listings = PYTHON_LISTING_RE.sub("", body)
        exercises = [
            Exercise(
                slug=item["slug"],
                title=item["title"],
                solution=(folder / f"{item['slug']}.solution.py").read_text(),
            )
            for item in front.get("exercises") or []
        ]
        quiz = quiz_read(folder) if (folder / "quiz.yaml").exists() else []
        parts.append(
            Part(
                number=int(folder.name[:2]),
                slug=front["slug"],
                title=front["title"],
                headings=len(re.findall(r"^## .+$", prose(without_listings), re.MULTILINE)),
                exercises=exercises,
                right_answers=[
                    next(choice["text"].strip() for choice in question["choices"] if choice.get("correct"))
                    for question in quiz
                ],
            )
        )
    return parts


@pytest.fixture
def walk_course(transactional_db):
    """The demo course imported, and the walk read from its files, before the browser starts."""
    course = demo_course()
    return course.slug, course.title, _parts_from_files()


def _replace_code(page, exercise, code: str) -> None:
    """Select everything in the editor and put `code` in its place, as a paste does."""
    exercise.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def _run_solution(page, part: Part, exercise: Exercise) -> None:
    from playwright.sync_api import expect

    section = page.locator("section.exercise", has=page.get_by_role("heading", name=exercise.title, exact=True))
    expect(section.locator(".cm-editor")).to_be_visible()
    _replace_code(page, section, exercise.solution)
    section.get_by_role("button", name="Run").click()
    output = section.locator("[data-exercise-output]")
    expect(output.locator(".out-check.is-passed")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(section.locator("[data-exercise-done]")).to_be_visible()
    # What the learner reads: Part 9's shows the text sampled from the model they trained.
    output.scroll_into_view_if_needed()
    output.screenshot(path=ARTIFACTS / f"walk-part-{part.number:02d}-{exercise.slug}-output.png")
    if exercise.draws:
        figure = output.locator(".out-figure img").first
        expect(figure).to_be_visible()
        assert figure.evaluate("(img) => img.complete && img.naturalWidth") > 100, exercise.slug
        # The figure itself: the output pane scrolls, so a shot of the whole exercise would cut it.
        figure.scroll_into_view_if_needed()
        figure.screenshot(path=ARTIFACTS / f"walk-part-{part.number:02d}-{exercise.slug}.png")


def _answer_quiz(page, answers: list[str]) -> None:
    from playwright.sync_api import expect

    quiz = page.locator("#quiz")
    quiz.scroll_into_view_if_needed()
    for number, answer in enumerate(answers, start=1):
        expect(quiz).to_contain_text(f"Question {number} of {len(answers)}")
        quiz.get_by_role("radio", name=answer, exact=True).check()
        quiz.get_by_role("button", name="Check answer").click()
    expect(quiz.locator(".quiz-result")).to_contain_text(f"{len(answers)} of {len(answers)} right at the first try")


def _take_the_code_home(page, parts: list[Part], folder: Path) -> None:
    """The completion page: the course finished, a quiz score and the passes for every part; then
    the code package, run outside the platform: every exercise's solution, as last run, runs."""
    from playwright.sync_api import expect

    page.get_by_role("link", name="What you have built").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("You finished the course")
    for part in parts:
        record = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name=part.title, exact=True))
        expect(record).to_contain_text("Complete")
        count = len(part.right_answers)
        expect(record.locator(".record-quiz")).to_have_text(f"{count} of {count} right at the first try")
        count = len(part.exercises)
        expect(record.locator(".record-passes")).to_have_text(f"{count} of {count} passed")
    page.screenshot(path=ARTIFACTS / "walk-completion-page.png", full_page=True)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download a Python package (.zip)").click()
    archive = folder / download_info.value.suggested_filename
    download_info.value.save_as(archive)
    with zipfile.ZipFile(archive) as package:
        package.extractall(folder / "home")
    ran = python_outside(["-m", archive.stem], cwd=folder / "home", timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    exercises = sum(len(part.exercises) for part in parts)
    assert ran.stdout.count("\n=== Part ") == exercises, ran.stdout[-3000:]


def test_a_learner_walks_every_published_part_in_order(walk_course, browser, web_server, run_worker, tmp_path):
    from playwright.sync_api import expect

    slug, title, parts = walk_course
    assert parts, "the course publishes at least one part"
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_up(page, web_server.url, "walker")
    course_url = f"{web_server.url}/courses/{slug}/"
    without_figure = []

    for part in parts:
        page.goto(course_url)
        page.get_by_role("link", name=part.title, exact=True).click()

        # Read it: the title, every section, top to bottom.
        expect(page.get_by_role("heading", level=1)).to_have_text(part.title)
        sections = page.locator(".chapter-body h2")
        expect(sections).to_have_count(part.headings)
        for index in range(part.headings):
            sections.nth(index).scroll_into_view_if_needed()

        for exercise in part.exercises:
            _run_solution(page, part, exercise)
        if not any(exercise.draws for exercise in part.exercises):
            without_figure.append(part.title)
        _answer_quiz(page, part.right_answers)

        page.goto(course_url)
        row = page.locator("li.part", has=page.get_by_role("link", name=part.title, exact=True))
        expect(row.locator(".mark-done", has_text="Complete")).to_be_visible()

    page.goto(course_url)
    expect(page.get_by_role("heading", level=1)).to_have_text(title)
    expect(page.locator(".progress-label")).to_have_text(f"{len(parts)} of {len(parts)} parts complete")
    page.screenshot(path=ARTIFACTS / "walk-course-complete.png", full_page=True)

    _take_the_code_home(page, parts, tmp_path)
    context.close()
    # Every published part teaches with a figure of its own (an exercise that draws with matplotlib).
    assert not without_figure, f"published parts with no figure to see: {without_figure}"


def test_the_walk_reads_every_published_part_from_the_course_folder():
    parts = _parts_from_files()
    folders = written_chapter_folders()

    assert [part.number for part in parts] == [int(folder.name[:2]) for folder in folders]
    for part, folder in zip(parts, folders, strict=True):
        assert len(part.right_answers) == len(quiz_read(folder))
        for exercise in part.exercises:
            assert Path(folder / f"{exercise.slug}.solution.py").read_text() == exercise.solution

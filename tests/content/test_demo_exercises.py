"""The demo course's exercises do what their chapters say.

Each exercise of every published part runs in one subprocess with the project's Python and torch
(the course modules importable, as in the sandbox): the starter code must run and its check must
fail with a hint that does not give the solution away (the starter is the "before" state), the
reference solution must run and pass its check. The exercises are read from the course files, so
a newly published part is checked like the others.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from courses.services.validation import key_lines
from tests.content.course_files import chapter_read, exercise_folder, written_chapter_folders

HARNESS = Path(__file__).with_name("exercise_harness.py")
EXERCISES = sorted(
    exercise["slug"] for folder in written_chapter_folders() for exercise in chapter_read(folder)[0]["exercises"]
)


def harness(*args: str, cwd: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(HARNESS), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module", params=EXERCISES)
def exercise_run(request, tmp_path_factory):
    slug = request.param
    folder = exercise_folder(slug)
    return slug, harness("exercise", str(folder), slug, cwd=tmp_path_factory.mktemp(slug))


def test_it_runs_the_starter_code_and_prints_something_to_read(exercise_run):
    _, result = exercise_run
    assert result["starter"]["error"] is None, result["starter"]["error"]
    assert result["starter"]["stdout"].strip()


def test_it_fails_the_check_on_the_starter_code_with_a_hint(exercise_run):
    slug, result = exercise_run
    check = result["starter"]["check"]
    assert check["error"] is None, check["error"]
    assert check["passed"] is False
    assert isinstance(check["message"], str) and len(check["message"]) > 20
    folder = exercise_folder(slug)
    solution, starter = (folder / f"{slug}.solution.py").read_text(), (folder / f"{slug}.py").read_text()
    for _, line in key_lines(solution=solution, starter=starter):
        assert line not in check["message"], f"the hint gives away the solution's line {line!r}"


def test_it_passes_the_check_on_the_reference_solution(exercise_run):
    _, result = exercise_run
    assert result["solution"]["error"] is None, result["solution"]["error"]
    check = result["solution"]["check"]
    assert check["error"] is None, check["error"]
    assert check["passed"] is True, check["message"]
    assert check["message"].strip(), "a passing check says what the learner achieved"


def test_it_answers_missing_or_wrong_typed_names_in_words(exercise_run):
    _, result = exercise_run
    for case in ("empty", "nonsense"):
        check = result[case]
        assert check["error"] is None, check["error"]
        assert check["passed"] is False
        assert isinstance(check["message"], str) and check["message"]


def test_it_keeps_checks_silent(exercise_run):
    _, result = exercise_run
    for case in ("starter", "solution"):
        assert result[case]["check"]["printed"] == ""
    assert result["empty"]["printed"] == result["nonsense"]["printed"] == ""


def test_it_runs_every_code_listing_in_the_written_chapters(tmp_path):
    chapters = [str(folder / "chapter.md") for folder in written_chapter_folders()]
    result = harness("listings", *chapters, cwd=tmp_path)
    assert len(result) >= len(chapters)  # a listing at least per written chapter
    for name, listing in result.items():
        assert listing["error"] is None, f"{name}: {listing['error']}"
        assert listing["stdout"].strip(), name

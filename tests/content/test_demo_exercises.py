"""The demo course's exercises do what their chapters say.

Each exercise runs in one subprocess with the project's Python and torch: the starter code must run
and its check must fail with a hint (the starter is the "before" state), the reference solution
must run and its check must pass with the message the text promises.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.content.course_files import exercise_folder, written_chapter_folders

HARNESS = Path(__file__).with_name("exercise_harness.py")

# What each passing check tells the learner, and what a failing one must not give away.
EXPECTED = {
    "one-query-three-keys": {"passes_with": "The weights now favour 'cat' (0.834)", "never_says": "[0.0, 4.0"},
    "a-mask-that-hides-the-future": {"passes_with": "gives 0.629 of its weight to the last one", "never_says": "False"},
    "a-feed-forward-pass": {"passes_with": "40 parameters", "never_says": "40"},
    "three-activations-compared": {"passes_with": "6 GELU values are below zero", "never_says": "6"},
}


def harness(*args: str, cwd: Path) -> dict:
    done = subprocess.run(
        [sys.executable, str(HARNESS), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module", params=sorted(EXPECTED))
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
    assert EXPECTED[slug]["never_says"] not in check["message"]


def test_it_passes_the_check_on_the_reference_solution(exercise_run):
    slug, result = exercise_run
    assert result["solution"]["error"] is None, result["solution"]["error"]
    check = result["solution"]["check"]
    assert check["error"] is None, check["error"]
    assert check["passed"] is True, check["message"]
    assert EXPECTED[slug]["passes_with"] in check["message"]


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
    assert len(result) == len(chapters)  # one listing per written chapter
    for name, listing in result.items():
        assert listing["error"] is None, f"{name}: {listing['error']}"
        assert listing["stdout"].strip(), name

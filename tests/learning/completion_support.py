"""A course and a learner's record in it for the completion page tests: the reading-page course
(parts 2 and 4 published) with a quiz in each published part, a course module whose header
comments say which part adds which piece, and a learner's runs, passes and answers."""

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from django.utils import timezone

from courses.models import Course, CourseModule, Exercise
from courses.services.progress import exercise_record_pass
from courses.services.quizzes import quiz_answer
from runner.models import Run
from tests.frontend.conftest import course_build
from tests.learning.conftest import quiz_add, right, wrong

# Plain Python, so the downloads run quickly with any Python; the demo course's test uses torch.
MODULE = '''\
"""The course's own pieces, part by part."""

# Part 2: attention by hand


def causal_mask(n):
    """Rows of booleans: True where a key lies in the query's future."""
    return [[j > i for j in range(n)] for i in range(n)]


class Scores:
    def __init__(self, values):
        self.values = list(values)


# Part 4: the feed-forward block

WIDTH = 4


def double(x):
    return 2 * x
'''


def course_with_module(*, slug: str = "transformers") -> Course:
    course = course_build(slug=slug)
    for chapter in course.chapters.filter(published=True):
        quiz_add(chapter=chapter)
    CourseModule.objects.create(course=course, name="groundup", source=MODULE)
    Exercise.objects.filter(chapter__course=course, slug="a-mask-that-hides-the-future").update(
        starter_code='import groundup\n\nprint("starter mask rows:", len(groundup.causal_mask(3)))\n'
    )
    Exercise.objects.filter(chapter__course=course, slug="a-feed-forward-pass").update(
        starter_code='import groundup\n\nprint("starter width:", groundup.WIDTH)\n'
    )
    return course


def exercise(course: Course, slug: str) -> Exercise:
    return Exercise.objects.get(chapter__course=course, slug=slug)


def run_add(
    *, user, exercise: Exercise, code: str, passed: bool | None = None, minutes_ago: int = 0, outputs=None
) -> Run:
    """A finished run, as the worker leaves it; a passing one records the pass as the worker does."""
    at = timezone.now() - dt.timedelta(minutes=minutes_ago)
    run = Run.objects.create(
        user=user,
        exercise=exercise,
        code=code,
        status=Run.Status.SUCCEEDED,
        created_at=at,
        finished_at=at + dt.timedelta(seconds=1),
        duration_ms=1000,
        check_passed=passed,
        passed=passed is True,
        outputs=outputs or [],
    )
    if passed:
        exercise_record_pass(user=user, exercise=exercise)
    return run


def quiz_take(*, user, course: Course, number: int, wrong_first: int = 0) -> None:
    """Answer every question of part `number`; the first `wrong_first` questions wrong at first."""
    for index, question in enumerate(course.chapters.get(number=number).questions.order_by("position")):
        if index < wrong_first:
            quiz_answer(user=user, question=question, choice=wrong(question))
        quiz_answer(user=user, question=question, choice=right(question))


def learner_code(marker: str) -> str:
    """A learner's own version of part 2's first exercise: it uses the course module and prints."""
    return (
        "import groundup\n\n"
        "mask = groundup.causal_mask(3)\n"
        'print("hidden keys:", sum(row.count(True) for row in mask))\n'
        f'print("{marker}")\n'
    )


def record_build(*, user, course: Course, marker: str) -> None:
    """Part 2: the first exercise passed with the learner's code, the second run once and not
    passed, the quiz finished with 4 of 5 at the first try. Part 4: nothing yet."""
    run_add(
        user=user,
        exercise=exercise(course, "one-query-three-keys"),
        code="print('an earlier try')\n",
        minutes_ago=10,
    )
    run_add(
        user=user,
        exercise=exercise(course, "one-query-three-keys"),
        code=learner_code(marker),
        passed=True,
        minutes_ago=5,
        outputs=[{"type": "stream", "name": "stdout", "text": f"hidden keys: 3\n{marker}\n"}],
    )
    run_add(
        user=user,
        exercise=exercise(course, "a-mask-that-hides-the-future"),
        code='raise ValueError("not done yet")\n',
        passed=False,
        minutes_ago=2,
    )
    quiz_take(user=user, course=course, number=2, wrong_first=1)


def python_outside(args: list[str], *, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """The project's Python in `cwd`, with nothing of the platform's environment: no settings
    module, no extra import path; figures drawn without a display."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO", "PYTHON"))}
    env["MPLBACKEND"] = "Agg"
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )

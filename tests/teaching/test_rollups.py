"""The dashboards' summaries: a finished run or a saved answer is on the dashboard as soon as it
is stored (its summary row is written in the same transaction), and the live rows, the generator's
and a rebuild from stored rows agree."""

import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from courses.models import Choice, Enrolment, Question
from courses.services.quizzes import quiz_answer
from runner.models import Run
from teaching.models import ChapterSummary, ExerciseErrorSummary, ExerciseSummary
from teaching.services.course_data import course_data_generate
from teaching.services.rollups import rollups_rebuild
from tests.runner.test_faults import wait_until
from tests.runner.worker import wait_for_run
from tests.teaching.conftest import _finish, _run

CHECK = "def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n"

EXERCISE_FIELDS = (
    "user_id",
    "exercise_id",
    "course_id",
    "day",
    "runs",
    "passes",
    "timed_out",
    "memory_stops",
    "runs_before",
    "first_pass_number",
    "timed_runs",
    "duration_total_ms",
    "last_run_at",
)
ERROR_FIELDS = ("user_id", "exercise_id", "course_id", "day", "error_name", "runs")
CHAPTER_FIELDS = (
    "user_id",
    "chapter_id",
    "course_id",
    "day",
    "answers",
    "first_tries",
    "first_try_right",
    "last_right_at",
)


def _summaries(course) -> tuple[list, list, list]:
    return (
        sorted(ExerciseSummary.objects.filter(course=course).values_list(*EXERCISE_FIELDS)),
        sorted(ExerciseErrorSummary.objects.filter(course=course).values_list(*ERROR_FIELDS)),
        sorted(ChapterSummary.objects.filter(course=course).values_list(*CHAPTER_FIELDS)),
    )


def test_a_finished_run_is_on_the_dashboard_just_after_it_ends(run_worker, make_learner, make_exercise, make_user):
    exercise = make_exercise(check_code=CHECK)
    course = exercise.chapter.course
    teacher = make_user(User.Role.INSTRUCTOR)
    course.instructors.add(teacher)
    learner = make_learner()
    Enrolment.objects.create(user=learner, course=course)
    runs, board = APIClient(), APIClient()
    runs.force_authenticate(learner)
    board.force_authenticate(teacher)

    for code in ("x = 3", "x = 2"):
        created = runs.post("/api/runs/", {"exercise": exercise.pk, "code": code}, format="json").json()
        wait_for_run(runs, created["id"])

    # The worker counts a run just after its learner has the result (teaching.services.outbox).
    summary = wait_until(
        "the second run to be counted",
        lambda: ExerciseSummary.objects.filter(user=learner, exercise=exercise, runs=2).first(),
        timeout_s=30,
    )
    assert (summary.runs, summary.passes, summary.first_pass_number) == (2, 1, 2)
    (row,) = board.get(f"/api/teach/courses/{course.slug}/dashboard/").json()["exercises"]
    assert (row["runs"], row["learners_ran"], row["learners_passed"], row["median_runs_to_pass"]) == (2, 1, 1, 2.0)


def test_a_quiz_answer_is_on_the_dashboard_when_it_is_saved(hand_course, client):
    learner = hand_course.dan
    question = Question.objects.get(pk=hand_course.q1.pk)
    wrong, right = Choice.objects.get(question=question, text="B"), Choice.objects.get(question=question, text="A")
    quiz_answer(user=learner, question=question, choice=wrong)
    quiz_answer(user=learner, question=question, choice=right)

    summary = ChapterSummary.objects.get(user=learner, chapter=hand_course.part1)
    assert (summary.answers, summary.first_tries, summary.first_try_right) == (2, 1, 0)
    client.force_login(hand_course.teacher)
    lines = b"".join(client.get("/teach/hand/export/learners.csv").streaming_content).decode().splitlines()
    dan = next(line for line in lines if line.split(",")[1] == "dan").split(",")
    assert (dan[7], dan[8]) == ("2", "0")  # quiz_answers, quiz_first_try_right
    # The question's figures (from the course's answer counts) hold dan's two answers too.
    (q1,) = client.get("/api/teach/courses/hand/dashboard/").json()["questions"]
    assert (q1["learners"], q1["answers"], q1["first_tries"]) == (4, 8, 4)


def test_runs_told_as_they_finish_add_up_to_a_rebuild(hand_course):
    rebuilt = _summaries(hand_course.course)
    ExerciseSummary.objects.all().delete()
    ExerciseErrorSummary.objects.all().delete()
    # The latest day's runs first: a run counted on a day before rows already there renumbers them.
    runs = Run.objects.filter(exercise__chapter__course=hand_course.course)
    for run in sorted(runs, key=lambda run: (-run.created_at.date().toordinal(), run.created_at)):
        _finish(run)
    assert _summaries(hand_course.course) == rebuilt


@pytest.mark.django_db
def test_the_generator_writes_the_summaries_a_rebuild_makes():
    made = course_data_generate(slug="rollups", learners=40, chapters=3, runs=600, seed=3)
    generated = _summaries(made.course)
    assert all(generated)
    rollups_rebuild(course=made.course)
    assert _summaries(made.course) == generated


def test_a_run_of_an_earlier_day_finishing_late_moves_a_later_first_try_pass(hand_course):
    # dan's run made today passes on its first try; then a run he made yesterday finishes.
    dan, e2 = hand_course.dan, hand_course.e2
    today = timezone.now()
    _finish(_run(user=dan, exercise=e2, at=today, passed=True))
    _finish(_run(user=dan, exercise=e2, at=today - dt.timedelta(days=1), passed=False))
    latest = ExerciseSummary.objects.get(user=dan, exercise=e2, day=today.astimezone(dt.UTC).date())
    assert (latest.runs_before, latest.first_pass_number) == (1, 2)

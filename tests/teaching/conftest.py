"""A small course whose dashboard figures are worked out by hand (see each test for the sums).

Two parts; Part 1 has question q1 (A right, B and C wrong) and exercise e1, Part 2 exercise e2.
Learners ann and bob are in the cohort "Morning"; cat and dan are not.

q1 answers: ann A; bob B, C, A; cat B, A; dan none.
e1 runs (oldest first): ann NameError, pass; bob ValueError and NameError (10 days ago), time-out,
pass; cat memory stop, NameError, NameError (no pass). Durations 100..800 ms and 20 s.
ann completed both parts, bob Part 1; cat started Part 1; dan enrolled 30 days ago and did nothing.
"""

import datetime as dt
from types import SimpleNamespace

import pytest
from django.utils import timezone

from accounts.models import User
from courses.models import (
    Chapter,
    ChapterProgress,
    Choice,
    Course,
    Enrolment,
    Exercise,
    ExerciseState,
    Question,
    QuizAnswer,
)
from runner.models import Run
from runner.signals import run_ended, run_finished
from teaching.services.cohorts import cohort_create, cohort_member_add
from teaching.services.rollups import rollups_rebuild


def _run(
    *,
    user,
    exercise,
    at,
    passed=None,
    status=Run.Status.SUCCEEDED,
    error="",
    reason="",
    limit=Run.Limit.NONE,
    ms=100,
    code="print(1)",
):
    return Run.objects.create(
        user=user,
        exercise=exercise,
        code=code,
        status=status,
        created_at=at,
        finished_at=at + dt.timedelta(milliseconds=ms),
        duration_ms=ms,
        check_passed=passed,
        passed=passed is True and status == Run.Status.SUCCEEDED,
        error_name=error,
        reason=reason,
        limit=limit,
        cause=Run.Cause.PROGRAM,
        outputs=[{"type": "error", "ename": error, "evalue": "boom", "traceback": []}] if error else [],
        stdout="hello\n",
    )


def _finish(run: Run) -> None:
    """Tell the dashboards a stored run has finished, as the runner does: in its terminal write,
    then once its learner has the result."""
    run_finished.send(sender=Run, run_id=run.pk, status=run.status, finished_at=run.finished_at)
    run_ended.send(sender=Run, run_id=run.pk)


@pytest.fixture
def hand_course(make_user, settings):
    return hand_course_build(make_user=make_user, settings=settings)


def hand_course_build(*, make_user, settings) -> SimpleNamespace:
    settings.DASHBOARD_STUCK_FAILED_RUNS = 3
    settings.DASHBOARD_STUCK_IDLE_DAYS = 14
    now = timezone.now()
    teacher = make_user(User.Role.INSTRUCTOR, username="teacher")
    other_teacher = make_user(User.Role.INSTRUCTOR, username="otherteacher")
    admin = make_user(User.Role.ADMIN, username="boss")
    ann, bob, cat, dan = (make_user(username=name) for name in ("ann", "bob", "cat", "dan"))
    outsider = make_user(username="outsider")

    course = Course.objects.create(slug="hand", title="Hand-built course", published=True)
    course.instructors.add(teacher)
    other = Course.objects.create(slug="other", title="Another course", published=True)
    other.instructors.add(other_teacher)
    part1 = Chapter.objects.create(course=course, number=1, slug="one", title="Part one", published=True)
    part2 = Chapter.objects.create(course=course, number=2, slug="two", title="Part two", published=True)
    q1 = Question.objects.create(chapter=part1, position=1, prompt="Which is right?")
    a = Choice.objects.create(question=q1, position=1, text="A", is_correct=True)
    b = Choice.objects.create(question=q1, position=2, text="B", explanation="Not B.")
    c = Choice.objects.create(question=q1, position=3, text="C", explanation="Not C.")
    e1 = Exercise.objects.create(chapter=part1, slug="e-one", position=1, title="Exercise one")
    e2 = Exercise.objects.create(chapter=part2, slug="e-two", position=1, title="Exercise two")

    for user in (ann, bob, cat, dan):
        Enrolment.objects.create(user=user, course=course)
    Enrolment.objects.filter(user__in=[ann, bob, cat]).update(enrolled_at=now - dt.timedelta(days=20))
    Enrolment.objects.filter(user=dan).update(
        enrolled_at=now - dt.timedelta(days=30), last_seen_at=now - dt.timedelta(days=30)
    )
    Enrolment.objects.filter(user__in=[ann, bob]).update(last_seen_at=now)
    Enrolment.objects.filter(user=cat).update(last_seen_at=now - dt.timedelta(days=3))

    morning = cohort_create(course=course, name="Morning", created_by=teacher)
    cohort_member_add(cohort=morning, user=ann)
    cohort_member_add(cohort=morning, user=bob)

    answers = [
        (ann, a, True, 1),
        (bob, b, False, 1),
        (bob, c, False, 2),
        (bob, a, True, 3),
        (cat, b, False, 1),
        (cat, a, True, 2),
    ]
    for user, choice, right, attempt in answers:
        QuizAnswer.objects.create(user=user, question=q1, choice=choice, is_correct=right, attempt=attempt)

    old = now - dt.timedelta(days=10)
    _run(
        user=ann,
        exercise=e1,
        at=now - dt.timedelta(minutes=50),
        passed=False,
        status=Run.Status.FAILED,
        error="NameError",
        ms=100,
    )
    _run(user=ann, exercise=e1, at=now - dt.timedelta(minutes=49), passed=True, ms=200, code="answer = 42")
    _run(user=bob, exercise=e1, at=old, passed=False, status=Run.Status.FAILED, error="ValueError", ms=300)
    _run(
        user=bob,
        exercise=e1,
        at=old + dt.timedelta(minutes=1),
        passed=False,
        status=Run.Status.FAILED,
        error="NameError",
        ms=400,
    )
    _run(
        user=bob,
        exercise=e1,
        at=now - dt.timedelta(minutes=40),
        status=Run.Status.TIMED_OUT,
        reason="time limit 20 s",
        limit=Run.Limit.TIME,
        ms=20000,
    )
    _run(user=bob, exercise=e1, at=now - dt.timedelta(minutes=39), passed=True, ms=500)
    _run(
        user=cat,
        exercise=e1,
        at=now - dt.timedelta(minutes=30),
        status=Run.Status.ERROR,
        reason="memory limit 2 GiB",
        limit=Run.Limit.MEMORY,
        ms=600,
    )
    _run(
        user=cat,
        exercise=e1,
        at=now - dt.timedelta(minutes=29),
        passed=False,
        status=Run.Status.FAILED,
        error="NameError",
        ms=700,
    )
    _run(
        user=cat,
        exercise=e1,
        at=now - dt.timedelta(minutes=28),
        passed=False,
        status=Run.Status.FAILED,
        error="NameError",
        ms=800,
    )

    ExerciseState.objects.create(user=ann, exercise=e1, passed_at=now - dt.timedelta(minutes=49))
    ExerciseState.objects.create(user=bob, exercise=e1, passed_at=now - dt.timedelta(minutes=39))
    ExerciseState.objects.create(user=ann, exercise=e2, passed_at=now - dt.timedelta(minutes=45))
    ChapterProgress.objects.create(user=ann, chapter=part1, quiz_finished_at=now, quiz_score=1, completed_at=now)
    ChapterProgress.objects.create(user=ann, chapter=part2, completed_at=now)
    ChapterProgress.objects.create(user=bob, chapter=part1, quiz_finished_at=now, quiz_score=0, completed_at=now)
    ChapterProgress.objects.create(user=cat, chapter=part1, quiz_finished_at=now, quiz_score=0)
    # The rows above were written directly, not by finishing runs and answering: summarise them as
    # the rebuild command does (tests/teaching/test_rollups.py follows the live path).
    rollups_rebuild(course=course)

    return SimpleNamespace(
        course=course,
        other=other,
        part1=part1,
        part2=part2,
        q1=q1,
        e1=e1,
        e2=e2,
        morning=morning,
        teacher=teacher,
        other_teacher=other_teacher,
        admin=admin,
        ann=ann,
        bob=bob,
        cat=cat,
        dan=dan,
        outsider=outsider,
        now=now,
    )

"""GET /api/exercises/<id>/attempts/ and .../attempts/<run id>/: a learner's own attempts at an
exercise (every run is one), newest first with what went wrong in one line, one attempt with its
code; nothing of another learner's, of an exercise the learner may not open, or for a visitor."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from courses.models import Chapter, Course, Exercise
from runner.models import Run
from runner.verdict import RunEnd, failure_line

pytestmark = pytest.mark.django_db


@pytest.fixture
def exercise():
    course = Course.objects.create(slug="attempts", title="Attempts", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
    return Exercise.objects.create(chapter=chapter, slug="ones", title="Ones", starter_code="x = 1\n")


def attempt(user, exercise, code, *, minutes_ago, status="failed", passed=False, failure=""):
    return Run.objects.create(
        user=user,
        exercise=exercise,
        code=code,
        status=status,
        passed=passed,
        failure=failure,
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
        finished_at=timezone.now(),
    )


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_it_lists_the_learners_attempts_newest_first_with_what_went_wrong(exercise, learner):
    first = attempt(learner, exercise, "x = 0\n", minutes_ago=3, failure="AssertionError: x must be 2")
    second = attempt(learner, exercise, "x = 1\n", minutes_ago=2, status="timed_out", failure="Time limit: 20 s")
    third = attempt(learner, exercise, "x = 2\n", minutes_ago=1, status="succeeded", passed=True)
    body = client_for(learner).get(f"/api/exercises/{exercise.pk}/attempts/").json()
    assert body["count"] == 3 and body["next_before"] is None
    assert [(a["id"], a["status"], a["passed"], a["failure"]) for a in body["attempts"]] == [
        (str(third.pk), "succeeded", True, ""),
        (str(second.pk), "timed_out", False, "Time limit: 20 s"),
        (str(first.pk), "failed", False, "AssertionError: x must be 2"),
    ]
    assert "code" not in body["attempts"][0]  # the list stays small; the code comes one attempt at a time
    detail = client_for(learner).get(f"/api/exercises/{exercise.pk}/attempts/{first.pk}/").json()
    assert detail["code"] == "x = 0\n" and detail["failure"] == "AssertionError: x must be 2"


def test_it_pages_a_long_history_from_the_oldest_attempt_shown(exercise, learner):
    runs = [attempt(learner, exercise, f"x = {i}\n", minutes_ago=200 - i) for i in range(60)]
    client = client_for(learner)
    first = client.get(f"/api/exercises/{exercise.pk}/attempts/").json()
    assert first["count"] == 60 and len(first["attempts"]) == 50
    assert first["attempts"][0]["id"] == str(runs[-1].pk) and first["next_before"] == str(runs[10].pk)
    rest = client.get(f"/api/exercises/{exercise.pk}/attempts/", {"before": first["next_before"]}).json()
    assert [a["id"] for a in rest["attempts"]] == [str(run.pk) for run in reversed(runs[:10])]
    assert rest["next_before"] is None
    assert client.get(f"/api/exercises/{exercise.pk}/attempts/", {"before": "not-a-run"}).status_code == 404


def test_another_learner_gets_nothing_of_someone_elses_attempts(exercise, learner, make_user):
    mine = attempt(learner, exercise, "secret = 42\n", minutes_ago=1)
    other = make_user(User.Role.LEARNER)
    client = client_for(other)
    listed = client.get(f"/api/exercises/{exercise.pk}/attempts/").json()
    assert listed == {"count": 0, "attempts": [], "next_before": None}
    response = client.get(f"/api/exercises/{exercise.pk}/attempts/{mine.pk}/")
    assert response.status_code == 404 and "secret" not in response.content.decode()
    assert client.get(f"/api/exercises/{exercise.pk}/attempts/", {"before": str(mine.pk)}).status_code == 404


def test_an_instructor_of_another_course_and_a_visitor_get_nothing(exercise, learner, instructor):
    mine = attempt(learner, exercise, "secret = 42\n", minutes_ago=1)
    elsewhere = Course.objects.create(slug="elsewhere", title="Elsewhere", published=True)
    elsewhere.instructors.add(instructor)
    response = client_for(instructor).get(f"/api/exercises/{exercise.pk}/attempts/{mine.pk}/")
    assert response.status_code == 404
    assert client_for().get(f"/api/exercises/{exercise.pk}/attempts/").status_code in (401, 403)
    assert client_for().get(f"/api/exercises/{exercise.pk}/attempts/{mine.pk}/").status_code in (401, 403)


def test_an_attempt_is_only_found_under_its_own_exercise(exercise, learner):
    other = Exercise.objects.create(chapter=exercise.chapter, slug="twos", title="Twos", position=2)
    run = attempt(learner, other, "y = 2\n", minutes_ago=1)
    assert client_for(learner).get(f"/api/exercises/{exercise.pk}/attempts/{run.pk}/").status_code == 404


def test_an_exercise_the_learner_may_not_open_has_no_history(exercise, learner):
    attempt(learner, exercise, "x = 1\n", minutes_ago=1)
    Chapter.objects.filter(pk=exercise.chapter_id).update(published=False)
    assert client_for(learner).get(f"/api/exercises/{exercise.pk}/attempts/").status_code == 404
    assert client_for(learner).get("/api/exercises/999999/attempts/").status_code == 404


@pytest.mark.parametrize(
    ("end", "events", "line"),
    [
        (RunEnd(status="succeeded", cause="program", check_passed=True), [], ""),
        (RunEnd(status="failed", cause="program", reason="Memory limit: 2 GiB\nmore"), [], "Memory limit: 2 GiB"),
        (
            RunEnd(status="failed", cause="program", exit_code=1, reason="the program raised ValueError"),
            [{"type": "error", "ename": "ValueError", "evalue": "bad value\nsecond line"}],
            "ValueError: bad value",
        ),
        (
            RunEnd(status="failed", cause="program", limit="memory", reason="Memory limit: 2 GiB"),
            [{"type": "error", "ename": "MemoryError", "evalue": ""}],
            "Memory limit: 2 GiB",
        ),
        (
            RunEnd(status="succeeded", cause="program", exit_code=0, check_passed=False),
            [{"type": "check", "passed": False, "message": "x should be 2, not 1"}],
            "x should be 2, not 1",
        ),
        (RunEnd(status="failed", cause="program", exit_code=3), [], "The program exited with code 3."),
        (RunEnd(status="succeeded", cause="program", exit_code=0, check_passed=False), [], "The check did not pass."),
    ],
)
def test_the_failure_line_says_what_went_wrong_first(end, events, line):
    assert failure_line(end, events) == line
    assert len(failure_line(RunEnd(status="failed", cause="program", reason="x" * 500))) == 200

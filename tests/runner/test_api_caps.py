"""Per-learner caps: at most N runs queued or running, at most M started a minute; 429 + Retry-After."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
from runner.models import Run


@pytest.fixture
def exercise(db):
    course = Course.objects.create(slug="c", title="C", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="ch", title="Ch", published=True)
    return Exercise.objects.create(chapter=chapter, slug="e", title="E")


@pytest.fixture
def learner_api(db):
    def make(name: str) -> APIClient:
        client = APIClient()
        client.force_authenticate(user_create(username=name, password="pw-for-tests-1"))
        return client

    return make


def submit(client, exercise):
    return client.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json")


def test_it_allows_two_active_runs_and_answers_the_third_with_429(learner_api, exercise, settings):
    settings.RUNNER_MAX_ACTIVE_PER_LEARNER = 2
    ada, bob = learner_api("ada"), learner_api("bob")

    first, second, third = submit(ada, exercise), submit(ada, exercise), submit(ada, exercise)

    assert (first.status_code, second.status_code) == (201, 201)
    assert third.status_code == 429
    assert int(third["Retry-After"]) >= 1
    assert "2" in third.json()["detail"]
    assert submit(bob, exercise).status_code == 201, "one learner's cap does not hold back another"
    assert Run.objects.filter(user__username="ada").count() == 2


def test_it_lets_a_learner_run_again_once_a_run_ends(learner_api, exercise, settings):
    settings.RUNNER_MAX_ACTIVE_PER_LEARNER = 1
    ada = learner_api("ada")
    run_id = submit(ada, exercise).json()["id"]
    assert submit(ada, exercise).status_code == 429

    Run.objects.filter(pk=run_id).update(status=Run.Status.SUCCEEDED, finished_at=timezone.now())

    assert submit(ada, exercise).status_code == 201


def test_it_caps_runs_a_minute_and_says_when_to_retry(learner_api, exercise, settings):
    settings.RUNNER_MAX_RUNS_PER_MINUTE = 3
    ada = learner_api("ada")
    now = timezone.now()
    for seconds_ago in (50, 20, 5):
        Run.objects.create(
            user=ada.handler._force_user,
            exercise=exercise,
            status=Run.Status.SUCCEEDED,
            created_at=now - timedelta(seconds=seconds_ago),
            finished_at=now,
        )
    Run.objects.create(
        user=ada.handler._force_user,
        exercise=exercise,
        status=Run.Status.SUCCEEDED,
        created_at=now - timedelta(seconds=61),
        finished_at=now,
    )

    response = submit(ada, exercise)

    assert response.status_code == 429
    # The run 50 s ago leaves the window in about 10 s.
    assert 1 <= int(response["Retry-After"]) <= 11
    assert "minute" in response.json()["detail"]


def test_it_refuses_code_with_a_nul_character(learner_api, exercise):
    response = learner_api("ada").post("/api/runs/", {"exercise": exercise.id, "code": "print(1)\x00"}, format="json")

    assert response.status_code == 400
    assert response.json()["detail"] == "Code contains a NUL character."  # as a save says (test_code_doors)

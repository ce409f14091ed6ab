"""The public runs API as DESIGN.md states it: status codes, JSON shapes and field names."""

import json

import pytest
from django.utils.crypto import get_random_string
from rest_framework.test import APIClient

from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
from runner import routing
from runner.models import Run
from tests.runner.worker import wait_for_run

RUN_DETAIL_FIELDS = {
    "id",
    "status",
    "exit_code",
    "outputs",
    "stdout",
    "stderr",
    "duration_ms",
    "reason",
    "created_at",
    "finished_at",
}


def exercise_create(*, published=True, slug="e", course_slug="c") -> Exercise:
    course = Course.objects.create(slug=course_slug, title=course_slug.upper(), published=published)
    chapter = Chapter.objects.create(course=course, number=1, slug="ch", title="Ch", published=published)
    return Exercise.objects.create(chapter=chapter, slug=slug, title=slug.upper())


@pytest.fixture
def exercise(db):
    return exercise_create()


@pytest.fixture
def api(db):
    user = user_create(username="ada", password="pw-for-tests-1")
    client = APIClient()
    token = client.post("/api/auth/token/", {"username": "ada", "password": "pw-for-tests-1"}, format="json")
    assert token.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    client.user = user
    return client


def test_it_lists_the_exercises_a_learner_may_run(api, exercise):
    hidden = exercise_create(published=False, slug="hidden", course_slug="draft")

    response = api.get("/api/exercises/")

    assert response.status_code == 200
    rows = response.json()
    assert [row["id"] for row in rows] == [exercise.id]
    assert hidden.id not in [row["id"] for row in rows]
    assert {"id", "slug", "title", "chapter", "course"} <= set(rows[0])
    assert rows[0]["chapter"] == "ch" and rows[0]["course"] == "c" and rows[0]["slug"] == "e"


def test_it_creates_a_queued_run(api, exercise):
    response = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "queued"
    assert set(body) >= RUN_DETAIL_FIELDS
    run = Run.objects.get(pk=body["id"])
    assert (run.user, run.exercise, run.code, run.queue) == (api.user, exercise, "print(1)", "cpu")


def test_it_queues_gpu_exercises_on_the_gpu_queue(api, exercise):
    exercise.needs_gpu = True
    exercise.save()
    if routing.enabled():
        # A GPU run is taken only while some GPU worker says it is alive (runner/routing.py).
        routing.hosts_alive_renew(queues=["gpu"], host="gpu-host-for-test", ttl_s=30)

    body = api.post("/api/runs/", {"exercise": exercise.id, "code": ""}, format="json").json()

    assert Run.objects.get(pk=body["id"]).queue == "gpu"


@pytest.mark.parametrize("path", ["/api/exercises/", "/api/runs/"])
def test_it_refuses_anonymous_callers_with_json(db, exercise, path):
    client = APIClient()
    response = client.post(path, {"exercise": exercise.id, "code": ""}, format="json")
    if path == "/api/exercises/":
        response = client.get(path)

    assert response.status_code in (401, 403)
    assert response.json()["detail"]


def test_it_answers_an_unknown_or_hidden_exercise_with_a_json_reason(api):
    hidden = exercise_create(published=False, slug="hidden", course_slug="draft")

    for exercise_id in (hidden.id, 999_999):
        response = api.post("/api/runs/", {"exercise": exercise_id, "code": "print(1)"}, format="json")
        assert response.status_code in (400, 404)
        assert "exercise" in response.json()["detail"].lower()
    assert not Run.objects.exists()


def test_it_refuses_code_over_64_kib_and_says_why(api, exercise):
    code = "#" * (64 * 1024 + 1)

    response = api.post("/api/runs/", {"exercise": exercise.id, "code": code}, format="json")

    assert response.status_code in (400, 413)
    assert "65536" in response.json()["detail"]
    assert not Run.objects.exists()


def test_it_accepts_code_of_exactly_64_kib(api, exercise):
    response = api.post("/api/runs/", {"exercise": exercise.id, "code": "#" * (64 * 1024)}, format="json")
    assert response.status_code == 201


def test_it_refuses_a_body_far_over_the_limit_with_json(api, exercise):
    body = json.dumps({"exercise": exercise.id, "code": "#" * (5 * 1024 * 1024)})

    response = api.generic("POST", "/api/runs/", body, content_type="application/json")

    assert response.status_code in (400, 413)
    assert response.json()["detail"]


@pytest.mark.parametrize(
    "body",
    ['{"exercise": 1, "code": ', "[]", '{"code": "print(1)"}', '{"exercise": "one", "code": "x"}', '{"exercise": 1}'],
)
def test_it_answers_malformed_input_with_400_json(api, exercise, body):
    response = api.generic("POST", "/api/runs/", body, content_type="application/json")

    assert response.status_code == 400
    assert isinstance(response.json(), dict) and response.json()


def test_it_hides_another_learners_run(api, exercise):
    other = APIClient()
    other.force_authenticate(user_create(username="bob", password="pw-for-tests-1"))
    run_id = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json").json()["id"]

    for path in (f"/api/runs/{run_id}/", f"/api/runs/{run_id}/events/"):
        response = other.get(path)
        assert response.status_code == 404
        assert response.json()["detail"]
    assert other.post(f"/api/runs/{run_id}/stop/").status_code == 404
    assert api.get(f"/api/runs/{run_id}/").status_code == 200


def test_it_answers_an_unknown_run_id_with_404(api):
    assert api.get("/api/runs/0b0b0b0b-0000-4000-8000-000000000000/").status_code == 404
    assert api.get("/api/runs/not-a-uuid/").status_code == 404


def test_it_accepts_session_auth_with_csrf_and_refuses_it_without(db, exercise):
    user_create(username="cy", password="pw-for-tests-1")
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="cy", password="pw-for-tests-1")
    payload = {"exercise": exercise.id, "code": "print(1)"}

    refused = client.post("/api/runs/", payload, format="json")
    secret = get_random_string(32)
    client.cookies["csrftoken"] = secret
    accepted = client.post("/api/runs/", payload, format="json", HTTP_X_CSRFTOKEN=secret)

    assert refused.status_code == 403
    assert "csrf" in refused.json()["detail"].lower()
    assert accepted.status_code == 201


def test_it_stops_a_queued_run_at_once(api, exercise):
    run_id = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json").json()["id"]

    response = api.post(f"/api/runs/{run_id}/stop/")

    assert response.status_code == 200
    assert response.json()["status"] == "failed"
    assert response.json()["reason"] == "stopped by learner"


def test_it_publishes_the_runs_api_in_the_openapi_schema(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/json")

    paths = response.json()["paths"]
    for path in ("/api/runs/", "/api/runs/{run_id}/", "/api/runs/{run_id}/events/", "/api/exercises/"):
        assert path in paths
    assert api.get("/api/docs/").status_code == 200


@pytest.mark.services
def test_it_runs_code_and_reports_the_contracts_fields(run_worker, make_learner, make_exercise):
    client = APIClient()
    client.force_authenticate(make_learner())
    exercise = make_exercise(check_code="def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n")

    created = client.post(
        "/api/runs/",
        {"exercise": exercise.id, "code": "x = 2\nprint('hello')\nimport sys\nprint('oops', file=sys.stderr)"},
        format="json",
    )
    body = wait_for_run(client, created.json()["id"])

    assert set(body) >= RUN_DETAIL_FIELDS
    assert body["status"] == "succeeded", body
    assert body["exit_code"] == 0
    assert body["stdout"] == "hello\n"
    assert "oops" in body["stderr"]
    assert body["duration_ms"] >= 0
    assert body["finished_at"]
    assert {"type": "stream", "name": "stdout", "text": "hello\n"} in body["outputs"]
    assert [e for e in body["outputs"] if e["type"] == "check"] == [
        {"type": "check", "passed": True, "message": "x must be 2"}
    ]


@pytest.mark.services
def test_it_reports_a_learner_error_as_failed_with_an_error_event(run_worker, make_learner, make_exercise):
    client = APIClient()
    client.force_authenticate(make_learner())
    exercise = make_exercise()

    created = client.post(
        "/api/runs/", {"exercise": exercise.id, "code": "def f():\n    return 1 / 0\nf()\n"}, format="json"
    )
    body = wait_for_run(client, created.json()["id"])

    assert body["status"] == "failed"
    errors = [e for e in body["outputs"] if e["type"] == "error"]
    assert errors and errors[0]["ename"] == "ZeroDivisionError"

"""GET /api/runs/<id>/events/: server-sent events under the ASGI server, ending with the status."""

import json

import pytest
import requests
from asgiref.sync import async_to_sync
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runner.models import Run

pytestmark = pytest.mark.services


def sse_frames(lines) -> list[dict]:
    """Parses an event stream into frames: {"id", "event", "data"} (comments dropped)."""
    frames, frame = [], {}
    for line in lines:
        if line == "":
            if frame:
                frames.append(frame)
            frame = {}
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            frame[key] = json.loads(value) if key == "data" else value
    if frame:
        frames.append(frame)
    return frames


def open_stream(web, token, run_id, **headers):
    return requests.get(
        f"{web.url}/api/runs/{run_id}/events/",
        headers={"Authorization": f"Token {token}", "Accept": "text/event-stream", **headers},
        stream=True,
        timeout=120,
    )


def submit(web, token, exercise, code) -> str:
    response = requests.post(
        f"{web.url}/api/runs/",
        json={"exercise": exercise.id, "code": code},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_it_streams_a_runs_events_live_and_ends_with_the_status(run_worker, web_server, make_learner, make_exercise):
    token = Token.objects.create(user=make_learner()).key
    code = "import time\nprint('first', flush=True)\ntime.sleep(4)\nprint('second')\nraise SystemExit(3)\n"
    run_id = submit(web_server, token, make_exercise(), code)

    with open_stream(web_server, token, run_id) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        lines = response.iter_lines(decode_unicode=True)
        first = []
        for line in lines:
            if line == "" and first:
                break
            first.append(line)
        status_when_first_arrived = Run.objects.get(pk=run_id).status
        rest = list(lines)
    frames = sse_frames([*first, "", *rest])

    assert status_when_first_arrived == "running", "the first event arrives while the run still runs"
    assert frames[0]["data"] == {"type": "stream", "name": "stdout", "text": "first\n"}
    assert frames[-1]["event"] == "status"
    assert frames[-1]["data"]["type"] == "status"
    assert frames[-1]["data"]["status"] == "failed"
    assert frames[-1]["data"]["exit_code"] == 3
    outputs = Run.objects.get(pk=run_id).outputs
    assert [f["data"] for f in frames[:-1]] == outputs, "the stream carries the same events as the record"
    assert [int(f["id"]) for f in frames] == list(range(len(outputs) + 1))


def test_it_resumes_after_the_last_event_id(run_worker, web_server, make_learner, make_exercise):
    token = Token.objects.create(user=make_learner()).key
    run_id = submit(
        web_server, token, make_exercise(), "import sys\nprint('a')\nsys.stdout.flush()\nprint('b', file=sys.stderr)\n"
    )
    with open_stream(web_server, token, run_id) as response:
        everything = sse_frames(response.iter_lines(decode_unicode=True))

    with open_stream(web_server, token, run_id, **{"Last-Event-ID": everything[0]["id"]}) as response:
        resumed = sse_frames(response.iter_lines(decode_unicode=True))

    assert resumed == everything[1:]
    assert resumed[-1]["event"] == "status"


def test_it_says_when_a_worker_has_claimed_the_run_to_a_client_that_asks(
    run_worker, web_server, make_learner, make_exercise
):
    token = Token.objects.create(user=make_learner()).key
    run_id = submit(web_server, token, make_exercise(), "import time\ntime.sleep(3)\nprint('after a nap')\n")

    with requests.get(
        f"{web_server.url}/api/runs/{run_id}/events/?running=1",
        headers={"Authorization": f"Token {token}", "Accept": "text/event-stream"},
        stream=True,
        timeout=120,
    ) as response:
        lines = response.iter_lines(decode_unicode=True)
        first = []
        for line in lines:
            if line == "" and first:
                break
            first.append(line)
        status_when_told = Run.objects.get(pk=run_id).status
        frames = sse_frames([*first, "", *lines])

    assert frames[0] == {"event": "running", "data": {"type": "running"}}, "told once, before any output, no id"
    assert status_when_told == "running"
    assert [f.get("event") for f in frames].count("running") == 1
    outputs = Run.objects.get(pk=run_id).outputs
    assert (
        [f["data"] for f in frames[1:-1]] == outputs == [{"type": "stream", "name": "stdout", "text": "after a nap\n"}]
    )
    assert [int(f["id"]) for f in frames[1:]] == list(range(len(outputs) + 1))
    assert frames[-1]["event"] == "status"


def test_it_answers_another_learners_stream_with_404_json(run_worker, web_server, make_learner, make_exercise):
    owner, other = Token.objects.create(user=make_learner()).key, Token.objects.create(user=make_learner()).key
    run_id = submit(web_server, owner, make_exercise(), "print(1)")

    response = requests.get(
        f"{web_server.url}/api/runs/{run_id}/events/", headers={"Authorization": f"Token {other}"}, timeout=30
    )

    assert response.status_code == 404
    assert response.json()["detail"]
    with open_stream(web_server, owner, run_id) as response:
        assert sse_frames(response.iter_lines(decode_unicode=True))[-1]["event"] == "status"


def test_it_streams_from_the_record_without_redis(transactional_db, make_learner, make_exercise, settings):
    """Without REDIS_URL (the embedded set-up) the stream polls the Run row."""
    settings.REDIS_URL = ""
    learner = make_learner()
    run = Run.objects.create(
        user=learner,
        exercise=make_exercise(),
        status=Run.Status.SUCCEEDED,
        exit_code=0,
        outputs=[
            {"type": "stream", "name": "stdout", "text": "hi\n"},
            {"type": "check", "passed": True, "message": ""},
        ],
        finished_at=timezone.now(),
        duration_ms=12,
        limit=Run.Limit.NONE,
        cause=Run.Cause.PROGRAM,
        check_passed=True,
        passed=True,
    )
    client = APIClient()
    client.force_authenticate(learner)

    response = client.get(f"/api/runs/{run.pk}/events/", HTTP_ACCEPT="text/event-stream")

    async def read_all() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    body = async_to_sync(read_all)().decode()

    frames = sse_frames(body.split("\n"))
    assert [f["data"] for f in frames[:-1]] == run.outputs
    assert frames[-1] == {
        "id": "2",
        "event": "status",
        "data": {
            # DESIGN.md's fields, then the facts code reads instead of the reason.
            **{"type": "status", "status": "succeeded", "exit_code": 0, "reason": "", "duration_ms": 12},
            **{"limit": "none", "cause": "program", "check_passed": True, "passed": True},
        },
    }

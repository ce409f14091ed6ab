"""One learner's open event streams cannot take the web tier from anyone else (issue 11, item 5).

A web server with a small database pool (DB_POOL_MAX=4) and a learner who opens 200 event streams
on a run that keeps running: with a connection held per open stream the fifth stream would wait for
the pool and the other learner's pages with it. Each server here names its database connections
(application_name), so pg_stat_activity tells how many it holds.
"""

import contextlib
import time

import pytest
import requests
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from runner import events
from runner.models import Run
from tests.runner.test_api_events import open_stream, sse_frames, submit
from tests.runner.worker import WebProcess, database_url, process_log_dir, services_required

pytestmark = pytest.mark.services

STREAMS = 200
POOL_MAX = 4


def web_process(tmp_path_factory, name: str, **env) -> WebProcess:
    return WebProcess(
        log_dir=process_log_dir(tmp_path_factory),
        DATABASE_URL=f"{database_url()}?application_name={name}",
        DB_POOL_MAX=str(POOL_MAX),
        **env,
    ).start()


def server_connections(name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
            [name],
        )
        return cursor.fetchone()[0]


def first_frame(lines) -> dict:
    frame = []
    for line in lines:
        if line == "" and frame:
            return sse_frames(frame)[0]
        frame.append(line)
    raise AssertionError("the stream ended before its first event")


def running_run(user, exercise) -> Run:
    """A run a worker never sees (it stays `running`), with one event already recorded."""
    now = timezone.now()
    return Run.objects.create(
        user=user,
        exercise=exercise,
        status=Run.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        outputs=[{"type": "stream", "name": "stdout", "text": "still going\n"}],
    )


def session_cookie(user) -> dict:
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


def wait_until(predicate, what: str, timeout_s: float = 60):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_200_open_streams_of_one_learner_leave_another_learner_unaffected(
    run_worker, tmp_path_factory, make_learner, make_exercise
):
    services_required()
    web = web_process(tmp_path_factory, "ec-streams-redis", RUNNER_MAX_STREAMS_PER_LEARNER=str(STREAMS + 10))
    hostile, other = make_learner(), make_learner()
    hostile_token, other_token = Token.objects.create(user=hostile).key, Token.objects.create(user=other).key
    exercise = make_exercise()
    held = running_run(hostile, exercise)
    slots = events._client(events.settings.REDIS_URL)
    slots.delete(events.stream_slots_key(hostile.pk))
    streams, readers = [], []
    try:
        for _ in range(STREAMS):
            response = open_stream(web, hostile_token, held.pk)
            streams.append(response)
            assert response.status_code == 200, response.text
            # Kept: a reader dropped half way closes its connection.
            readers.append(response.iter_lines(decode_unicode=True))
            # The first event arrives once the stream has read the row and waits for news.
            assert first_frame(readers[-1])["data"]["text"] == "still going\n"

        in_use = server_connections("ec-streams-redis")
        print(f"{STREAMS} open streams: the web process holds {in_use} database connections (pool max {POOL_MAX})")
        assert in_use <= POOL_MAX, f"{in_use} database connections for {STREAMS} open streams"
        assert slots.zcard(events.stream_slots_key(hostile.pk)) == STREAMS

        # The other learner reads a chapter page and the exercise list...
        cookies = session_cookie(other)
        course, chapter = exercise.chapter.course, exercise.chapter
        page = requests.get(f"{web.url}/courses/{course.slug}/{chapter.slug}/", cookies=cookies, timeout=30)
        assert page.status_code == 200
        assert chapter.title in page.text
        listed = requests.get(
            f"{web.url}/api/exercises/", headers={"Authorization": f"Token {other_token}"}, timeout=30
        )
        assert listed.status_code == 200
        assert exercise.id in [item["id"] for item in listed.json()]
        # ...and runs code, following its events to the end.
        run_id = submit(web, other_token, exercise, "print('unaffected')")
        with open_stream(web, other_token, run_id) as response:
            frames = sse_frames(response.iter_lines(decode_unicode=True))
        assert frames[0]["data"] == {"type": "stream", "name": "stdout", "text": "unaffected\n"}
        assert frames[-1]["event"] == "status"
        assert frames[-1]["data"]["status"] == "succeeded"
        assert server_connections("ec-streams-redis") <= POOL_MAX
        for response in streams:
            response.close()
        # Every stream hands its slot back when its client leaves.
        wait_until(lambda: slots.zcard(events.stream_slots_key(hostile.pk)) == 0, "the slots to be released")
    finally:
        for response in streams:
            response.close()
        web.stop()


def test_without_redis_streams_poll_the_row_and_hold_no_connection(tmp_path_factory, make_learner, make_exercise):
    """The embedded set-up (no REDIS_URL): each stream polls the row, handing its connection back
    between polls."""
    services_required()
    web = web_process(tmp_path_factory, "ec-streams-polling", REDIS_URL="", RUNNER_MAX_STREAMS_PER_LEARNER="100")
    hostile, other = make_learner(), make_learner()
    hostile_token, other_token = Token.objects.create(user=hostile).key, Token.objects.create(user=other).key
    exercise = make_exercise()
    held = running_run(hostile, exercise)
    streams, readers = [], []
    try:
        for _ in range(40):
            response = open_stream(web, hostile_token, held.pk)
            streams.append(response)
            assert response.status_code == 200, response.text
            lines = response.iter_lines(decode_unicode=True)
            readers.append(lines)
            assert first_frame(lines)["data"]["text"] == "still going\n"
        assert server_connections("ec-streams-polling") <= POOL_MAX

        listed = requests.get(
            f"{web.url}/api/exercises/", headers={"Authorization": f"Token {other_token}"}, timeout=30
        )
        assert listed.status_code == 200

        Run.objects.filter(pk=held.pk).update(
            status=Run.Status.SUCCEEDED, exit_code=0, finished_at=timezone.now(), duration_ms=5
        )
        for lines in readers:
            frames = sse_frames(list(lines))
            assert frames[-1]["event"] == "status"
            assert frames[-1]["data"]["status"] == "succeeded"
    finally:
        for response in streams:
            with contextlib.suppress(Exception):
                response.close()
        web.stop()

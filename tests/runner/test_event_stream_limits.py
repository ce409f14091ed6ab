"""One learner holds at most RUNNER_MAX_STREAMS_PER_LEARNER open event streams; the count lives in
Redis with an expiry, so the slots of a web process that died come back on their own."""

import contextlib
import os
import signal

import pytest
import requests
from rest_framework.authtoken.models import Token

from runner import events
from tests.runner.test_api_events import open_stream
from tests.runner.test_event_stream_load import first_frame, running_run, wait_until, web_process
from tests.runner.worker import services_required

pytestmark = pytest.mark.services

LIMIT = 8


def open_streams(web, token, run, count):
    streams, readers = [], []
    for _ in range(count):
        response = open_stream(web, token, run.pk)
        assert response.status_code == 200, response.text
        streams.append(response)
        readers.append(response.iter_lines(decode_unicode=True))
        first_frame(readers[-1])
    return streams, readers


def test_a_learner_over_the_stream_limit_gets_429_with_a_json_detail(tmp_path_factory, make_learner, make_exercise):
    services_required()
    web = web_process(tmp_path_factory, "ec-streams-limit", RUNNER_MAX_STREAMS_PER_LEARNER=str(LIMIT))
    learner, other = make_learner(), make_learner()
    token, other_token = Token.objects.create(user=learner).key, Token.objects.create(user=other).key
    exercise = make_exercise()
    run, other_run = running_run(learner, exercise), running_run(other, exercise)
    for user in (learner, other):
        events._client(events.settings.REDIS_URL).delete(events.stream_slots_key(user.pk))
    streams = []
    try:
        streams, _readers = open_streams(web, token, run, LIMIT)

        refused = open_stream(web, token, run.pk)
        assert refused.status_code == 429
        assert refused.headers["Content-Type"].startswith("application/json")
        assert "event streams open" in refused.json()["detail"]
        assert int(refused.headers["Retry-After"]) > 0
        # Another learner is not counted against this one.
        theirs = open_stream(web, other_token, other_run.pk)
        assert theirs.status_code == 200
        theirs.close()

        # Closing one (a tab closed) frees its slot.
        streams.pop().close()

        def reopens():
            response = open_stream(web, token, run.pk)
            if response.status_code == 200:
                streams.append(response)
                return True
            response.close()
            return False

        wait_until(reopens, "a freed slot")
    finally:
        for response in streams:
            response.close()
        web.stop()


def test_slots_of_a_web_process_that_died_expire(tmp_path_factory, make_learner, make_exercise):
    services_required()
    env = {"RUNNER_MAX_STREAMS_PER_LEARNER": str(LIMIT), "RUNNER_STREAM_SLOT_TTL_S": "3"}
    learner = make_learner()
    token = Token.objects.create(user=learner).key
    run = running_run(learner, make_exercise())
    key = events.stream_slots_key(learner.pk)
    slots = events._client(events.settings.REDIS_URL)
    slots.delete(key)
    first = web_process(tmp_path_factory, "ec-streams-dies", **env)
    streams = []
    try:
        streams, _readers = open_streams(first, token, run, LIMIT)
        # The process dies without closing anything: its slots stay in Redis for now.
        os.killpg(first.proc.pid, signal.SIGKILL)
        first.proc.wait()
        assert slots.zcard(key) == LIMIT
    finally:
        for response in streams:
            with contextlib.suppress(requests.RequestException):
                response.close()
        first.stop()
    second = web_process(tmp_path_factory, "ec-streams-after", **env)
    try:
        refused = open_stream(second, token, run.pk)
        if refused.status_code == 429:  # the dead process's slots have not expired yet
            wait_until(lambda: open_stream(second, token, run.pk).status_code == 200, "the dead slots to expire")
    finally:
        second.stop()

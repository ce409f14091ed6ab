"""A finished run says which limit stopped it (`limit`), who ended it (`cause`) and the check's
verdict (`check_passed`) and the run's (`passed`) as fields, in the run's detail and in the stream's status event, beside
the English `reason` that stays for people."""

import importlib
import time
from datetime import timedelta

import pytest
import requests
from django.apps import apps
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runner import services
from runner.models import Run
from sandbox.base import RunResult
from tests.runner.test_api_events import open_stream, sse_frames, submit
from tests.runner.worker import wait_for_run

FACTS = ("status", "limit", "cause", "check_passed", "passed")


def facts(body: dict) -> tuple:
    return tuple(body[name] for name in FACTS)


@pytest.mark.services
def test_each_way_a_run_ends_is_told_by_its_facts_in_the_detail_and_the_status_event(
    run_worker, web_server, make_learner, make_exercise
):
    learner = make_learner()
    token = Token.objects.create(user=learner).key
    checked = make_exercise(check_code="def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n")
    plain, quick = make_exercise(), make_exercise(time_limit_s=2)
    cases = {
        "x = 2\nprint('passes')": (checked, ("succeeded", "none", "program", True, True)),
        "x = 3\nprint('does not pass')": (checked, ("succeeded", "none", "program", False, False)),
        "raise ValueError('mine')": (plain, ("failed", "none", "program", None, False)),
        "while True:\n    pass\n": (quick, ("timed_out", "time", "program", None, False)),
        "block = bytearray(4 * 1024**3)\n": (plain, ("failed", "memory", "program", None, False)),
        "import sys\nsys.stdout.write('y' * 3 * 1024 * 1024)\n": (plain, ("failed", "output", "program", None, False)),
    }
    seen = {}
    for code, (exercise, _expected) in cases.items():
        run_id = submit(web_server, token, exercise, code)
        with open_stream(web_server, token, run_id) as response:
            status_event = sse_frames(response.iter_lines(decode_unicode=True))[-1]["data"]
        detail = requests.get(
            f"{web_server.url}/api/runs/{run_id}/", headers={"Authorization": f"Token {token}"}, timeout=30
        ).json()
        seen[code] = (facts(detail), facts(status_event), detail["reason"] == status_event["reason"])

    assert seen == {code: (expected, expected, True) for code, (_exercise, expected) in cases.items()}


@pytest.mark.services
def test_a_learners_stop_of_a_running_run_is_the_learners_cause_not_a_limit(run_worker, make_learner, make_exercise):
    client = APIClient()
    client.force_authenticate(make_learner())
    run_id = client.post(
        "/api/runs/",
        {"exercise": make_exercise(time_limit_s=20).id, "code": "import time\nprint('on', flush=True)\ntime.sleep(60)"},
        format="json",
    ).json()["id"]
    deadline = time.monotonic() + 60  # only stops a hung test
    while not Run.objects.get(pk=run_id).stdout and time.monotonic() < deadline:
        time.sleep(0.2)  # until the recorder stored the first line: the program runs

    client.post(f"/api/runs/{run_id}/stop/")
    body = wait_for_run(client, run_id)

    assert (body["status"], body["limit"], body["cause"], body["reason"]) == (
        "failed",
        "none",
        "learner",
        "stopped by learner",
    )


def test_a_queued_run_stopped_is_the_learners_cause(learner, make_exercise):
    client = APIClient()
    client.force_authenticate(learner)
    run = Run.objects.create(user=learner, exercise=make_exercise(), code="print(1)")  # queued; no worker takes it

    body = client.post(f"/api/runs/{run.pk}/stop/").json()

    assert facts(body) == ("failed", "none", "learner", None, False)


def test_runs_the_platform_ends_are_the_platforms_cause(learner, make_exercise, settings):
    exercise = make_exercise()
    lost = Run.objects.create(user=learner, exercise=exercise, status=Run.Status.RUNNING, heartbeat_at=timezone.now())
    services.run_execute(run_id=lost.pk, worker="second@host", redelivered=True)
    stale = Run.objects.create(
        user=learner,
        exercise=exercise,
        status=Run.Status.RUNNING,
        heartbeat_at=timezone.now() - timedelta(minutes=5),
    )
    services.run_sweep(stale_after_s=30, queued_max_s=900)

    for run in (lost, stale):
        run.refresh_from_db()
        assert (run.status, run.limit, run.cause) == ("error", "none", "platform"), run.reason


@pytest.mark.parametrize(
    ("result", "stop_seen", "expected"),
    [
        (
            RunResult(status="timed_out", reason="time limit 20 s", limit="time"),
            False,
            ("timed_out", "time", "program"),
        ),
        (RunResult(status="timed_out", reason="time limit 20 s", limit="time"), True, ("failed", "none", "learner")),
        (RunResult(status="succeeded"), True, ("succeeded", "none", "program")),
        (RunResult(status="error", reason="sandbox failed"), False, ("error", "none", "platform")),
        (RunResult(status="exploded"), False, ("error", "none", "platform")),
    ],
)
def test_the_end_of_a_run_the_worker_ran_follows_the_sandbox_and_the_learners_stop(result, stop_seen, expected):
    end = services.RunEnd.from_sandbox(result, stop_seen=stop_seen)

    assert (end.status, end.limit, end.cause) == expected


def test_the_backfill_reads_the_facts_of_older_runs_from_their_reason(learner, make_exercise):
    exercise = make_exercise()
    reasons = {
        ("succeeded", ""): ("none", "program"),
        ("failed", "the program raised ValueError"): ("none", "program"),
        ("timed_out", "time limit 20 s"): ("time", "program"),
        ("failed", "memory limit 2 GiB"): ("memory", "program"),
        ("failed", "output limit 1 MiB"): ("output", "program"),
        ("failed", "process limit 64"): ("processes", "program"),
        ("failed", "file size limit 10 MiB"): ("files", "program"),
        ("failed", "tmp space limit 64 MiB"): ("files", "program"),
        ("failed", "open files limit 256"): ("files", "program"),
        ("failed", "stopped by learner"): ("none", "learner"),
        ("error", "worker lost"): ("none", "platform"),
        ("error", "sandbox failed: OSError: no"): ("none", "platform"),
    }
    runs = {
        key: Run.objects.create(
            user=learner, exercise=exercise, status=key[0], reason=key[1], finished_at=timezone.now()
        )
        for key in reasons
    }
    active = Run.objects.create(user=learner, exercise=exercise)
    migration = importlib.import_module("runner.migrations.0005_run_limit_cause_backfill")

    migration.backfill(apps, None)

    assert {
        key: tuple(Run.objects.values_list("limit", "cause").get(pk=run.pk)) for key, run in runs.items()
    } == reasons
    assert tuple(Run.objects.values_list("limit", "cause").get(pk=active.pk)) == ("", "")

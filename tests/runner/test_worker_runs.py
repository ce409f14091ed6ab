"""How a worker treats runs: a claim per run, heartbeats, the sweeper, stop, and caps under a burst."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from runner import services
from runner.models import Run
from runner.tasks import run_execute_task
from sandbox import backend_get
from tests.runner.worker import wait_for_run


def run_create(*, user, exercise, status=Run.Status.QUEUED, **fields) -> Run:
    if status in Run.TERMINAL:
        fields.setdefault("finished_at", timezone.now())
    return Run.objects.create(user=user, exercise=exercise, status=status, **fields)


@pytest.mark.services
def test_it_runs_a_message_delivered_twice_only_once(run_worker, make_learner, make_exercise):
    learner = make_learner()
    run = services.run_submit(user=learner, exercise=make_exercise(), code="print('once')")
    run_execute_task.apply_async(args=[str(run.pk)], queue="cpu")  # the same message again

    client = APIClient()
    client.force_authenticate(learner)
    body = wait_for_run(client, run.pk)

    assert body["status"] == "succeeded"
    assert body["stdout"] == "once\n"
    # A third delivery, after the end, changes nothing either.
    finished = Run.objects.get(pk=run.pk)
    run_execute_task.apply(args=[str(run.pk)])
    assert Run.objects.get(pk=run.pk).finished_at == finished.finished_at


def test_it_leaves_a_run_another_worker_is_running_alone(learner, make_exercise):
    run = run_create(user=learner, exercise=make_exercise(), status=Run.Status.RUNNING, heartbeat_at=timezone.now())

    services.run_execute(run_id=run.pk, worker="second@host")

    run.refresh_from_db()
    assert (run.status, run.worker) == ("running", "")


def test_it_ends_a_redelivered_running_run_as_worker_lost_instead_of_running_it_again(learner, make_exercise):
    run = run_create(user=learner, exercise=make_exercise(), status=Run.Status.RUNNING, heartbeat_at=timezone.now())

    services.run_execute(run_id=run.pk, worker="second@host", redelivered=True)

    run.refresh_from_db()
    assert (run.status, run.reason) == ("error", "worker lost")
    assert run.finished_at is not None


def test_it_sweeps_runs_whose_heartbeat_stopped(learner, make_exercise, settings):
    settings.RUNNER_STALE_AFTER_S = 30
    settings.RUNNER_QUEUED_MAX_S = 900
    exercise = make_exercise()
    now = timezone.now()
    stale = run_create(user=learner, exercise=exercise, status="running", heartbeat_at=now - timedelta(minutes=5))
    fresh = run_create(user=learner, exercise=exercise, status="running", heartbeat_at=now)
    lost = run_create(user=learner, exercise=exercise, created_at=now - timedelta(hours=1))
    waiting = run_create(user=learner, exercise=exercise)
    done = run_create(user=learner, exercise=exercise, status="succeeded", heartbeat_at=now - timedelta(hours=1))

    ended = services.run_sweep(backend=backend_get("local"))

    assert ended == 2
    states = {r.pk: (r.status, r.reason) for r in Run.objects.all()}
    assert states[stale.pk] == ("error", "worker stopped responding")
    assert states[lost.pk] == ("error", "no worker picked the run up")
    assert states[fresh.pk] == ("running", "")
    assert states[waiting.pk] == ("queued", "")
    assert states[done.pk] == ("succeeded", "")


def test_it_ends_the_runs_a_restarted_worker_left_running(learner, make_exercise):
    exercise = make_exercise()
    mine = run_create(user=learner, exercise=exercise, status="running", worker="w1@host", heartbeat_at=timezone.now())
    other = run_create(user=learner, exercise=exercise, status="running", worker="w2@host", heartbeat_at=timezone.now())

    services.run_worker_started(worker="w1@host")

    assert Run.objects.get(pk=mine.pk).reason == "worker lost"
    assert Run.objects.get(pk=other.pk).status == "running"


@pytest.mark.services
def test_it_keeps_the_heartbeat_fresh_while_a_program_is_silent(run_worker, make_learner, make_exercise):
    learner = make_learner()
    run = services.run_submit(user=learner, exercise=make_exercise(), code="import time\ntime.sleep(8)\n")

    beats = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row = Run.objects.get(pk=run.pk)
        if row.status == "running":
            beats.add(row.heartbeat_at)
        if len(beats) >= 3 or row.status in Run.TERMINAL:
            break
        time.sleep(0.3)

    assert len(beats) >= 3, "the heartbeat moved on while the program printed nothing"
    client = APIClient()
    client.force_authenticate(learner)
    assert wait_for_run(client, run.pk)["status"] == "succeeded"


@pytest.mark.services
def test_it_stops_a_running_run_when_the_learner_asks(run_worker, make_learner, make_exercise):
    learner = make_learner()
    client = APIClient()
    client.force_authenticate(learner)
    exercise = make_exercise(time_limit_s=8)
    run_id = client.post(
        "/api/runs/",
        {"exercise": exercise.id, "code": "import time\nprint('on', flush=True)\ntime.sleep(60)\n"},
        format="json",
    ).json()["id"]
    deadline = time.monotonic() + 60
    while not Run.objects.get(pk=run_id).stdout and time.monotonic() < deadline:
        time.sleep(0.2)

    assert client.post(f"/api/runs/{run_id}/stop/").status_code == 200
    body = wait_for_run(client, run_id)

    assert (body["status"], body["reason"]) == ("failed", "stopped by learner")

"""Several worker hosts: a learner's runs follow their warm sandbox, and a host that dies loses no run.

Two worker processes on this machine play two hosts (distinct RUNNER_HOST, each its own pool and
its own host queue next to the shared `cpu`), with the beat as a third process, on the real
PostgreSQL and Redis, local backend (quick to start a sandbox)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter

import pytest
from rest_framework.test import APIClient

from courses.models import Exercise
from runner import routing
from runner.models import Run
from runner.tasks import run_execute_task
from tests.runner.worker import ROOT, WorkerProcess, backend_required, process_env, services_required, wait_for_run

WORKER_ENV = {
    "RUNNER_WARM": "1",
    "RUNNER_WARM_SPARES": "1",
    "RUNNER_WARM_MAX": "3",
    # The sweeper (from the beat, on whichever host takes it) ends a dead host's run soon.
    "RUNNER_STALE_AFTER_S": "6",
    "RUNNER_HEARTBEAT_S": "1",
}


class BeatProcess:
    """`celery beat`: the one service that schedules the sweeper."""

    def __init__(self, *, log_dir, **env: str):
        self.log_path = log_dir / "beat.log"
        self.schedule = log_dir / "beat-schedule"
        self.env = process_env(**env)
        self.proc: subprocess.Popen | None = None

    def start(self) -> BeatProcess:
        argv = [sys.executable, "-m", "celery", "-A", "ecplatform", "beat", "-s", str(self.schedule), "-l", "INFO"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)


@pytest.fixture
def two_hosts(transactional_db, tmp_path, worker_switch):
    services_required()
    backend_required("local")
    # The session's worker also consumes `cpu`; here only the two hosts may.
    worker_switch.close()
    tag = uuid.uuid4().hex[:6]
    hosts = {}
    for name in ("a", "b"):
        hosts[f"host-{name}-{tag}"] = WorkerProcess(
            backend="local",
            log_dir=tmp_path,
            concurrency=2,
            queues="cpu",
            RUNNER_HOST=f"host-{name}-{tag}",
            **WORKER_ENV,
        ).start()
    beat = BeatProcess(log_dir=tmp_path, RUNNER_SWEEP_INTERVAL_S="2").start()
    yield hosts
    beat.stop()
    for worker in hosts.values():
        worker.stop()


def wait_for(condition, what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.2)


def host_of(hosts: dict, run: Run) -> str:
    return next(host for host, worker in hosts.items() if worker.hostname == run.worker)


@pytest.mark.services
def test_a_learners_runs_follow_their_sandbox_and_a_dead_host_loses_none(
    two_hosts, make_learner, make_exercise, settings
):
    settings.RUNNER_MAX_RUNS_PER_MINUTE = 100
    hosts = two_hosts
    exercise, slow = make_exercise(), make_exercise(time_limit_s=90)

    # Each host gets one run of someone else, so both pools know the shape and start a spare.
    other = make_learner()
    for host in hosts:
        run = Run.objects.create(user=other, exercise=exercise, code="print('warm-up')")
        run_execute_task.apply_async(args=[str(run.pk)], queue=routing.host_queue("cpu", host))
    for host, worker in hosts.items():
        wait_for(lambda worker=worker: "spare started in" in worker.log(), f"{host} has a spare")
        wait_for(lambda host=host: routing.host_alive(queue="cpu", host=host), f"{host} says it is alive")

    learner = make_learner()
    client = APIClient()
    client.force_authenticate(learner)

    def submit(code: str, on: Exercise = exercise) -> str:
        response = client.post("/api/runs/", {"exercise": on.id, "code": code}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    runs = []
    for n in range(20):
        body = wait_for_run(client, submit(f"print({n} * 2)"))
        assert (body["status"], body["stdout"]) == ("succeeded", f"{n * 2}\n"), body
        runs.append(Run.objects.get(pk=body["id"]))

    (home, landed), *_ = Counter(host_of(hosts, run) for run in runs).most_common()
    warm_at_home = sum(1 for run in runs if run.warm and host_of(hosts, run) == home)
    print(f"20 runs: {landed} on {home}, {warm_at_home} warm there")
    assert warm_at_home >= 19
    assert "hit (learner's sandbox)" in hosts[home].log()

    # The learner's host dies in the middle of a run.
    slow_id = submit("import time\nprint('started', flush=True)\ntime.sleep(80)", on=slow)
    wait_for(lambda: Run.objects.get(pk=slow_id).status == Run.Status.RUNNING, "the slow run starts")
    assert host_of(hosts, Run.objects.get(pk=slow_id)) == home
    hosts[home].kill()
    (survivor,) = set(hosts) - {home}

    after = []
    for n in range(4):
        body = wait_for_run(client, submit(f"print('after {n}')"))
        assert (body["status"], body["stdout"]) == ("succeeded", f"after {n}\n"), body
        after.append(Run.objects.get(pk=body["id"]))
    assert {host_of(hosts, run) for run in after} == {survivor}

    # The run the dead host was running ends too, and says why.
    body = wait_for_run(client, slow_id)
    assert (body["status"], body["reason"]) == ("error", "worker stopped responding"), body
    assert not Run.objects.filter(user=learner, status__in=Run.ACTIVE).exists()

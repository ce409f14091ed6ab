"""Faults around a run: the broker down, a worker killed mid-run, programs that die early or print
bytes that are not text. Each ends with a clear status and reason, and leaves nothing behind."""

import socket
import subprocess
import time
import uuid

import pytest
import requests
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runner import services
from runner.models import Run
from runner.tasks import run_execute_task
from sandbox import backend_shared
from tests.runner.attacks import ATTACKS_BY_NAME
from tests.runner.worker import (
    BACKENDS,
    WebProcess,
    WorkerProcess,
    backend_required,
    process_log_dir,
    services_required,
    wait_for_run,
)

pytestmark = pytest.mark.services


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket closes


def processes_with(marker: str) -> list[str]:
    # -ww: full command lines whatever the terminal width (COLUMNS) says.
    out = subprocess.run(["ps", "-eww", "-o", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eww" not in line]


def wait_until(what, predicate, timeout_s: float = 90):
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)
    return value


def test_it_answers_503_and_keeps_nothing_queued_when_the_broker_is_down(
    transactional_db, make_learner, make_exercise, tmp_path_factory
):
    services_required()
    web = WebProcess(log_dir=process_log_dir(tmp_path_factory), REDIS_URL=f"redis://127.0.0.1:{closed_port()}/0")
    web.start()
    try:
        token = Token.objects.create(user=make_learner()).key
        headers = {"Authorization": f"Token {token}"}

        response = requests.post(
            f"{web.url}/api/runs/",
            json={"exercise": make_exercise().id, "code": "print(1)"},
            headers=headers,
            timeout=60,
        )
        detail = requests.get(f"{web.url}/api/runs/{response.json()['id']}/", headers=headers, timeout=30)
    finally:
        web.stop()

    assert response.status_code == 503
    assert response.json()["reason"] == "broker unavailable"
    assert response.json()["detail"]
    run = Run.objects.get()
    assert (run.status, run.reason) == ("error", "broker unavailable")
    assert run.finished_at is not None
    assert detail.json()["status"] == "error"
    assert not Run.objects.filter(status__in=Run.ACTIVE).exists()


@pytest.mark.parametrize("recovery", ["worker restart", "sweeper"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_it_ends_a_run_whose_worker_was_killed_and_leaves_no_sandbox(
    transactional_db, make_learner, make_exercise, tmp_path_factory, backend, recovery
):
    services_required()
    backend_required(backend)
    # Its own queue, so the session's worker cannot take the run.
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    log_dir = process_log_dir(tmp_path_factory)
    worker = WorkerProcess(backend=backend, log_dir=log_dir, queues=queue).start()
    marker = f"ecfault{uuid.uuid4().hex[:12]}"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    run = Run.objects.create(user=make_learner(), exercise=make_exercise(time_limit_s=60), code=code)
    run_execute_task.apply_async(args=[str(run.pk)], queue=queue)
    try:
        wait_until("the program to start", lambda: "started" in Run.objects.get(pk=run.pk).stdout)
        assert processes_with(marker), "the program's child runs before the kill"

        worker.kill()

        if recovery == "worker restart":
            restarted = WorkerProcess(backend=backend, log_dir=log_dir, queues=queue)
            restarted.nodename = worker.nodename
            worker = restarted.start()
        else:
            services.run_sweep(stale_after_s=0, backend=backend_shared(backend))
        ended = wait_until("the run to end", lambda: Run.objects.filter(pk=run.pk).exclude(status="running").first())
    finally:
        worker.kill()

    assert ended.status == "error"
    assert ended.reason in ("worker lost", "worker stopped responding")
    assert ended.finished_at is not None
    wait_until("no process of the run to remain", lambda: not processes_with(marker), timeout_s=30)
    if backend == "docker":
        import docker

        left = docker.from_env().containers.list(all=True, filters={"label": f"easycompilers.run={run.pk}"})
        assert left == [], "the run's container was removed"


@pytest.mark.parametrize("name", ["exits_before_printing", "invalid_utf8_and_nul"])
def test_it_reports_programs_that_die_early_or_print_bytes_that_are_not_text(
    run_worker, make_learner, make_exercise, name
):
    attack = ATTACKS_BY_NAME[name]
    client = APIClient()
    client.force_authenticate(make_learner())
    exercise = make_exercise(time_limit_s=int(attack.wall_s))

    created = client.post("/api/runs/", {"exercise": exercise.id, "code": attack.code}, format="json")
    body = wait_for_run(client, created.json()["id"])

    attack.expect(body["status"], body["reason"], body["outputs"], body["exit_code"])
    assert "\x00" not in body["stdout"], "the stored stdout copy shows NUL as U+FFFD"

"""Warm sandboxes through a real worker: the Run row says warm or cold, the worker logs the pool,
and the admin lists it."""

import time
import uuid

import pytest
from rest_framework.test import APIClient

from runner.models import Run
from runner.tasks import run_execute_task
from tests.runner.worker import BACKENDS, WorkerProcess, backend_required, services_required, wait_for_run


@pytest.fixture(params=BACKENDS)
def warm_worker(request, transactional_db, tmp_path):
    """One worker process (so every run meets the same pool) with one spare, on a queue of its
    own so no other worker of the test session can take its runs."""
    services_required()
    backend_required(request.param)
    worker = WorkerProcess(
        backend=request.param,
        log_dir=tmp_path,
        concurrency=1,
        queues=f"warm-{uuid.uuid4().hex[:8]}",
        RUNNER_WARM="1",
        RUNNER_WARM_SPARES="1",
    ).start()
    yield worker
    worker.stop()


def run_and_wait(worker, learner, exercise, code: str) -> Run:
    client = APIClient()
    client.force_authenticate(learner)
    run = Run.objects.create(user=learner, exercise=exercise, code=code)
    run_execute_task.apply_async(args=[str(run.pk)], queue=worker.queues)
    body = wait_for_run(client, run.pk)
    assert body["status"] == "succeeded", body
    return Run.objects.get(pk=run.pk)


def wait_for_log(worker, text: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while text not in worker.log():
        assert time.monotonic() < deadline, f"the worker never logged {text!r}:\n{worker.log()[-3000:]}"
        time.sleep(0.2)


@pytest.mark.services
def test_it_records_warm_and_cold_runs_and_logs_the_pool(warm_worker, make_learner, make_exercise):
    learner, exercise = make_learner(), make_exercise()

    # The worker starts its spare in the background: the first run goes warm if the spare is
    # ready in time, cold otherwise. Either way the row says which.
    first = run_and_wait(warm_worker, learner, exercise, "print('one')")
    assert first.stdout == "one\n" and first.warm in (True, False)
    wait_for_log(warm_worker, "spare started in")

    second = run_and_wait(warm_worker, learner, exercise, "import torch\nprint(torch.ones(2).sum().item())")
    third = run_and_wait(warm_worker, learner, exercise, "print('three')")
    assert (second.warm, second.stdout) == (True, "2.0\n")
    assert (third.warm, third.stdout) == (True, "three\n")

    log = warm_worker.log()
    assert "hit (learner's sandbox)" in log
    warm_runs = sum(run.warm for run in (first, second, third))
    assert f"hits {warm_runs}, misses {3 - warm_runs}" in log


def test_the_admin_lists_warm_or_cold(admin_client, make_learner, make_exercise):
    learner, exercise = make_learner(), make_exercise()
    for warm in (True, False):
        Run.objects.create(user=learner, exercise=exercise, code="", backend="local", warm=warm)
    response = admin_client.get("/admin/runner/run/")
    assert response.status_code == 200
    assert response.content.count(b'<td class="field-warm">') == 2
    assert b"By warm" in response.content

"""Pressing Run twice, again and again, leaks no warm sandbox: through the API, on the real worker
of each backend, the worker's warm sandboxes (containers with its warm label, or its bubblewrap
servers) never pass RUNNER_WARM_MAX."""

import os
import socket
import threading
from pathlib import Path

import pytest
from django.conf import settings

from tests.runner.test_attack_battery_api import Learner

pytestmark = pytest.mark.services

PAIRS = 12


def children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def warm_sandboxes(worker) -> int:
    """The worker process's warm sandboxes now."""
    pid = worker.proc.pid
    if worker.backend == "docker":
        import docker

        client = docker.from_env()
        try:
            label = f"easycompilers.warm={socket.gethostname()}:{pid}"
            # sparse: the list alone, without inspecting each container (one removed between the
            # list and its inspection answered 404 and killed the counting thread in CI).
            return len(client.containers.list(filters={"label": label}, sparse=True))
        finally:
            client.close()
    count = 0
    for child in children(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"bwrap" and b"--serve" in argv:
            count += 1
    return count


def test_pressing_run_twice_again_and_again_leaks_no_warm_sandbox(
    any_backend_worker, web_server, make_learner, make_exercise
):
    exercise = make_exercise(time_limit_s=10)
    learners = [Learner(web_server, make_learner()) for _ in range(3)]
    most = [warm_sandboxes(any_backend_worker)]
    done = threading.Event()

    def count_sandboxes() -> None:
        while not done.is_set():
            most.append(warm_sandboxes(any_backend_worker))
            done.wait(0.2)

    counter = threading.Thread(target=count_sandboxes)
    counter.start()
    try:
        for pair in range(PAIRS):
            learner = learners[pair % len(learners)]
            # A double click: two runs of one learner at once.
            presses = [learner.submit(exercise, f"import time\ntime.sleep(0.5)\nprint({i})") for i in range(2)]
            assert [p.status_code for p in presses] == [201, 201], [p.text for p in presses]
            for i, press in enumerate(presses):
                body = learner.wait(press.json()["id"])
                assert (body["status"], body["stdout"]) == ("succeeded", f"{i}\n"), body
    finally:
        done.set()
        counter.join()

    assert max(most) <= settings.RUNNER_WARM_MAX, f"warm sandboxes over time: {most}"
    assert warm_sandboxes(any_backend_worker) <= settings.RUNNER_WARM_MAX

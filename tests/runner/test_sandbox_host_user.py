"""Who a learner's program is on the host: never root, whoever started the worker (the local
backend drops a root worker's sandboxes to RUNNER_LOCAL_UID; containers run as 65534). Seen from
the host, on each backend, cold and warm."""

import os
import subprocess
import threading
import time
import uuid

import pytest

from sandbox.base import Limits, RunRequest
from sandbox.local import host_uid


def host_uids_of(marker: str) -> set[int]:
    out = subprocess.run(["ps", "-eww", "-o", "uid=,args="], capture_output=True, text=True, check=True).stdout
    return {int(line.split()[0]) for line in out.splitlines() if marker in line and "ps -eww" not in line}


@pytest.mark.services
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_learners_program_is_an_unprivileged_user_on_the_host(sandbox_backend, warm, settings):
    settings.RUNNER_WARM = warm
    marker = f"ecuid{uuid.uuid4().hex[:10]}"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', '{marker}'])\n"
        "time.sleep(30)\n"
    )
    request = RunRequest(run_id=marker, code=code, owner="uid-learner" if warm else "", limits=Limits(wall_s=40))
    pool = sandbox_backend.warm.get() if warm else None
    if pool is not None:
        assert pool.warm_up(request)
    details = {}
    thread = threading.Thread(
        target=lambda: details.update(sandbox_backend.execute(request, lambda event: None).details), daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (uids := host_uids_of(marker)):
            assert time.monotonic() < deadline, "the program never started"
            time.sleep(0.1)
        assert 0 not in uids
        expected = 65534 if sandbox_backend.name == "docker" else (host_uid() or os.geteuid())
        assert uids == {expected}
    finally:
        sandbox_backend.stop(marker)
        thread.join(timeout=30)
        if pool is not None:
            pool.close()
            sandbox_backend.warm._pool = None
    assert details.get("warm") is warm

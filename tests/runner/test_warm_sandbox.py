"""Warm sandboxes (sandbox/pool.py) on each backend: the attack battery with every attack
run in a warm sandbox, and what a warm sandbox must never carry from one run to the next."""

import socket
import threading
import time

import pytest

from sandbox.base import Limits, RunRequest
from sandbox.pool import WarmPool, WarmSettings
from sandbox.protocol import request_payload
from tests.runner.attacks import ATTACKS, MARKER
from tests.runner.conftest import BACKENDS, Run, backend_or_skip, host_processes_with

SPARES = 2


@pytest.fixture(autouse=True)
def _warm_sandboxes_on(settings):
    # Every test here is about warm sandboxes, whatever the environment says (RUNNER_WARM).
    settings.RUNNER_WARM = True


@pytest.fixture(scope="module", params=BACKENDS)
def warm_backend(request):
    """A backend of its own with a pool of two spares, closed after the module."""
    backend = backend_or_skip(request.param)
    pool = WarmPool(
        name=backend.name,
        start=backend._warm_start,
        config=WarmSettings(spares=SPARES, max_sandboxes=SPARES + 3, idle_s=600),
    )
    backend.warm._pool = pool
    yield backend
    pool.close()


def ready(backend) -> None:
    """Waits until the spares are started, so the next runs find warm sandboxes."""
    assert backend.warm.current().warm_up(RunRequest(run_id="shape", code="", limits=Limits(wall_s=10)))


counter = iter(range(1, 1_000_000))


def run_as(backend, owner: str, code: str, *, wall_s: float = 10.0, check: str = "") -> Run:
    events: list = []
    request = RunRequest(
        run_id=f"warm-{next(counter)}", code=code, check_code=check, owner=owner, limits=Limits(wall_s=wall_s)
    )
    result = backend.execute(request, events.append)
    return Run(result, events)


@pytest.mark.services
@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_it_contains_the_attack_in_a_warm_sandbox(warm_backend, attack):
    ready(warm_backend)
    if attack.before:
        first = run_as(warm_backend, "other-learner", attack.before, wall_s=attack.wall_s)
        assert first.status == "succeeded", (first.status, first.reason, first.outputs)
        assert first.result.details["warm"] is True
        ready(warm_backend)
    run = run_as(warm_backend, "attacker", attack.code, wall_s=attack.wall_s, check=attack.check)
    assert run.result.details["warm"] is True, "the attack ran cold"
    attack.expect(run.status, run.reason, run.outputs, run.exit_code)
    if attack.marker:
        assert host_processes_with(attack.marker) == [], "a process of the run outlived it"
    # The attacker's next run (warm when its sandbox survived, else cold) is healthy.
    after = run_as(warm_backend, "attacker", "print('fine')", wall_s=attack.wall_s)
    assert (after.status, after.text()) == ("succeeded", "fine\n"), (after.status, after.reason, after.outputs)


LEAVE_BEHIND = f"""
import ctypes, os, subprocess, sys, time
import torch
open('/tmp/{MARKER}', 'w').write('left')
os.makedirs('/tmp/{MARKER}-dir/sub', exist_ok=True)
os.chmod('/tmp/{MARKER}-dir', 0)
open('/dev/shm/{MARKER}', 'w').write('left')
libc = ctypes.CDLL(None)
print('shm', libc.shmget(0, 4096, 0o1600))
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{MARKER}'], start_new_session=True)
torch.randn = lambda *a, **k: 'patched'
torch.leaked_attribute = 'left'
import random
random.random = lambda: 'patched'
print('left things behind')
"""

LOOK_FOR_IT = f"""
import os, random, sys
import torch
found = []
for path in ('/tmp/{MARKER}', '/tmp/{MARKER}-dir', '/dev/shm/{MARKER}'):
    if os.path.exists(path):
        found.append(path)
if open('/proc/sysvipc/shm').read().count(chr(10)) > 1:
    found.append('a SysV shared memory segment')
others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]
for pid in others:
    try:
        cmd = open(f'/proc/{{pid}}/cmdline').read()
    except OSError:
        continue
    if '{MARKER}' in cmd:
        found.append('the background process')
if torch.randn(1) == 'patched' or hasattr(torch, 'leaked_attribute') or random.random() == 'patched':
    found.append('the changed module')
print('LEAK', found) if found else print('OK nothing left')
"""


@pytest.mark.services
def test_it_leaves_nothing_of_a_run_to_the_learners_next_run_or_another_learners(warm_backend):
    ready(warm_backend)
    first = run_as(warm_backend, "learner-a", LEAVE_BEHIND)
    assert first.status == "succeeded" and "left things behind" in first.text(), (first.reason, first.outputs)
    assert first.result.details["warm"] is True
    again = run_as(warm_backend, "learner-a", LOOK_FOR_IT)
    # The same sandbox served A again, and the run saw nothing of the first.
    assert again.result.details.get("sandbox") == first.result.details["sandbox"]
    assert again.text() == "OK nothing left\n", again.outputs
    ready(warm_backend)
    other = run_as(warm_backend, "learner-b", LOOK_FOR_IT)
    assert other.result.details["warm"] is True
    assert other.result.details["sandbox"] != first.result.details["sandbox"]
    assert other.text() == "OK nothing left\n", other.outputs
    assert host_processes_with(MARKER) == []


MQ = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.restype = ctypes.c_int
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
NAME = b"/{MARKER}"
"""

LEAVE_IPC_AND_METADATA = (
    MQ
    + f"""
print("mq", libc.mq_open(NAME, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0)
for folder in ("/tmp", "/dev/shm"):
    os.utime(folder, (1_000_000_000, 1_000_000_000))  # back to 2001
    os.setxattr(folder, "user.{MARKER}", b"left")
print("left them behind")
"""
)

LOOK_FOR_IPC_AND_METADATA = (
    MQ
    + f"""
found = []
if libc.mq_open(NAME, os.O_RDONLY, 0, None) >= 0:
    found.append("the message queue")
for folder in ("/tmp", "/dev/shm"):
    if os.stat(folder).st_mtime < 1_100_000_000:
        found.append(f"{{folder}}'s time")
    if any("{MARKER}" in name for name in os.listxattr(folder)):
        found.append(f"{{folder}}'s attribute")
print("LEAK", found) if found else print("OK nothing left")
"""
)


@pytest.mark.services
def test_it_keeps_no_ipc_object_or_folder_metadata_for_the_learners_next_run(warm_backend):
    ready(warm_backend)
    first = run_as(warm_backend, "learner-m", LEAVE_IPC_AND_METADATA)
    assert first.result.details["warm"] is True
    assert first.status == "succeeded" and first.text() == "mq True\nleft them behind\n", first.outputs
    again = run_as(warm_backend, "learner-m", LOOK_FOR_IPC_AND_METADATA)
    # Reused when the sandbox could put everything back, else replaced: either way nothing is left.
    assert again.text() == "OK nothing left\n", again.outputs
    restored = run_as(
        warm_backend, "learner-m", LEAVE_IPC_AND_METADATA.replace("libc.mq_open(NAME", "(lambda *a: 0)(NAME")
    )
    after = run_as(warm_backend, "learner-m", LOOK_FOR_IPC_AND_METADATA)
    # Times and attributes alone are put back: the same sandbox serves the next run.
    assert after.result.details.get("sandbox") == restored.result.details["sandbox"]
    assert after.text() == "OK nothing left\n", after.outputs


RANDOM = "import random, numpy\nprint(random.random(), numpy.random.random())\n"


@pytest.mark.services
def test_it_gives_each_run_fresh_random_state(warm_backend):
    ready(warm_backend)
    runs = [run_as(warm_backend, "learner-r", RANDOM) for _ in range(3)]
    assert all(r.result.details["warm"] for r in runs)
    assert len({r.result.details["sandbox"] for r in runs}) == 1
    outputs = [r.text() for r in runs]
    assert len(set(outputs)) == 3, outputs


@pytest.mark.services
def test_it_survives_a_run_that_kills_its_parent(warm_backend):
    ready(warm_backend)
    code = (
        "import os, signal, time\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError as e:\n        print('refused', e)\n"
        "time.sleep(0.3)\nprint('still running')\n"
    )
    run = run_as(warm_backend, "learner-k", code)
    assert run.result.details["warm"] is True
    assert run.status in ("succeeded", "failed") and (run.status == "succeeded" or run.reason), run.outputs
    after = run_as(warm_backend, "learner-k", "print('fine')")
    assert (after.status, after.text()) == ("succeeded", "fine\n")


@pytest.mark.services
def test_it_runs_cold_when_the_pool_is_exhausted(warm_backend):
    ready(warm_backend)
    runs: dict = {}

    def one(i: int) -> None:
        runs[i] = run_as(warm_backend, f"crowd-{i}", "import torch\nprint(torch.ones(2).sum().item())\n", wall_s=60)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(SPARES + 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.status for r in runs.values()] == ["succeeded"] * (SPARES + 2), [r.reason for r in runs.values()]
    assert all(r.text() == "2.0\n" for r in runs.values())
    warm = [r.result.details["warm"] for r in runs.values()]
    assert warm.count(True) <= SPARES and warm.count(False) >= 2, warm
    sandboxes = [r.result.details["sandbox"] for r in runs.values() if r.result.details["warm"]]
    assert len(set(sandboxes)) == len(sandboxes), "two learners shared a sandbox"


@pytest.mark.services
def test_it_runs_cold_without_an_owner(warm_backend):
    ready(warm_backend)
    run = run_as(warm_backend, "", "print('x')")
    assert run.status == "succeeded" and run.result.details["warm"] is False


@pytest.mark.services
def test_it_ignores_a_forged_end_line(warm_backend):
    ready(warm_backend)
    forged = 'import os\nos.write(1, b\'{"type": "end", "nonce": "00"}\\n\')\nprint("after the forged end")\n'
    run = run_as(warm_backend, "learner-f", forged)
    assert run.status == "succeeded" and "after the forged end" in run.text(), run.outputs
    after = run_as(warm_backend, "learner-f", "print('next')")
    assert after.text() == "next\n", after.outputs


REPORTS_ITSELF_DONE = f"""
import os, subprocess, sys, time
# A background process that keeps printing, then the run's exit code written to the server's
# status pipe (fd 4) while the program goes on: the run ends there, and all of it is stopped.
subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True:\\n    print("late", flush=True)\\n    time.sleep(0.01)', '{MARKER}s'])
print('reporting', flush=True)
os.write(4, b'0\\n')
time.sleep(5)
print('never printed')
"""


@pytest.mark.services
def test_a_run_that_says_it_is_done_early_ends_only_itself(warm_backend):
    ready(warm_backend)
    run = run_as(warm_backend, "learner-s", REPORTS_ITSELF_DONE)
    assert run.result.details["warm"] is True
    # What was still on its way out when the program said it was done may be cut: its own doing.
    assert run.status == "succeeded" and "never printed" not in run.text(), run.outputs
    assert host_processes_with(f"{MARKER}s") == []
    after = run_as(warm_backend, "learner-s", "import time\ntime.sleep(0.2)\nprint('next')")
    assert after.result.details.get("sandbox") == run.result.details["sandbox"]
    assert (after.status, after.text()) == ("succeeded", "next\n"), after.outputs


@pytest.mark.services
def test_it_ends_a_warm_run_at_its_own_wall_limit(warm_backend):
    ready(warm_backend)
    run = run_as(warm_backend, "learner-t", "while True:\n    pass\n", wall_s=2)
    assert run.result.details["warm"] is True
    assert (run.status, run.reason) == ("timed_out", "time limit 2 s")
    # A sandbox whose run hit a limit is not used again.
    after = run_as(warm_backend, "learner-t", "print('fine')")
    assert after.result.details.get("sandbox") != run.result.details["sandbox"]


@pytest.mark.services
def test_it_ends_a_warm_sandbox_whose_worker_went_away_mid_run(warm_backend):
    sandbox = warm_backend._warm_start((Limits(), False))
    try:
        assert sandbox.wait_ready()
        code = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{MARKER}w'])\nprint('started', flush=True)\ntime.sleep(600)\n"
        request = RunRequest(run_id="gone", code=code, limits=Limits(wall_s=600))
        sandbox._send(
            request_payload(request, address_space=sandbox.address_space, processes=sandbox.processes, nonce="n")
        )
        deadline = time.monotonic() + 60
        while not host_processes_with(f"{MARKER}w"):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.2)
        # What a worker's death does to the sandbox's stdin: it closes.
        if warm_backend.name == "local":
            sandbox.proc.stdin.close()
            assert sandbox.proc.wait(timeout=30) is not None
        else:
            # (close() alone leaves the connection to the client's other references; a dead
            # process leaves none.)
            sandbox.sock.shutdown(socket.SHUT_RDWR)
            deadline = time.monotonic() + 30
            while any(c.id == sandbox.container.id for c in sandbox.container.client.containers.list(all=True)):
                assert time.monotonic() < deadline, "the container outlived its worker"
                time.sleep(0.5)
        deadline = time.monotonic() + 30
        while host_processes_with(f"{MARKER}w"):
            assert time.monotonic() < deadline, "a process of the run outlived its worker"
            time.sleep(0.2)
    finally:
        sandbox.close()


@pytest.mark.services
def test_it_runs_cold_when_a_spare_died_before_the_program_started(warm_backend):
    ready(warm_backend)
    pool = warm_backend.warm.current()
    spares = list(pool.sandboxes())
    for sandbox in spares:
        sandbox._kill()  # the spares die (an engine restart, the OOM killer) while they wait
    for sandbox in spares:
        # Dead, not dying: a kill is delivered while the test goes on, and a spare still exiting
        # when the run is sent to it is a sandbox dying mid-run (another test), not this one.
        sandbox._exit_code()
    run = run_as(warm_backend, "learner-d", "print('fine')")
    assert (run.status, run.text()) == ("succeeded", "fine\n"), (run.reason, run.outputs)
    assert run.result.details["warm"] is False

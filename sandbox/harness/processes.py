"""The processes of a run as the supervisor keeps them: the run's process forked ahead (Child),
killing every other process of the sandbox, and what the interpreter has set up before a fork."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable

from .data import DATA_LIMIT
from .output import CHUNK
from .program import Streams, run_program, write_all

CATCHABLE = [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD)]
# What a fresh Python has (SIGPIPE and SIGXFSZ ignored, SIGINT raising KeyboardInterrupt): a run
# gets these back, so a write past the file size limit raises as in a fresh interpreter. Read when
# the harness is imported, before the supervisor ignores every signal it can.
STARTING_HANDLERS = {sig: signal.getsignal(sig) for sig in CATCHABLE}
PR_SET_DUMPABLE = 4


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, loaded once: every run calls into it (prctl, the IPC wipe)."""
    return ctypes.CDLL(None, use_errno=True)


def set_dumpable(value: int) -> None:
    if libc().prctl(PR_SET_DUMPABLE, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def kill_all() -> None:
    """Every process in the sandbox but this one (init) ends, and is reaped."""
    kill_others_until(lambda pid: False)


def kill_others_until(done: Callable[[str], bool], *, spare: int = 0) -> None:
    """SIGKILL to every process in the sandbox but this one (init) and `spare` (the check's process
    forked ahead), reaping those that have ended, until each one left is `done` (none left:
    always)."""
    me, kept = str(os.getpid()), str(spare)
    for _ in range(2000):
        if spare:
            # One by one, as kill(-1) would take the spared one too; a process forked meanwhile is
            # killed on the next round.
            for pid in os.listdir("/proc"):
                if pid.isdigit() and pid not in (me, kept):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if all(done(pid) for pid in os.listdir("/proc") if pid.isdigit() and pid not in (me, kept)):
            return
        time.sleep(0.0005)
    raise RuntimeError("processes of the run would not end")


def oom_kills() -> int:
    for path, key in (
        ("/sys/fs/cgroup/memory.events", "oom_kill"),
        ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
    ):
        with contextlib.suppress(OSError, ValueError), open(path) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    return 0


def cuda_initialised() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def warm_up() -> None:
    """First calls that set things up lazily, made once here rather than in every run. None of
    them draws a random number (a run starts from the random state a cold start has) or starts a
    thread (OMP_NUM_THREADS=1)."""
    numpy = sys.modules["numpy"]
    torch = sys.modules["torch"]
    numpy.random.seed()
    numpy.ones((4, 4)) @ numpy.ones((4, 4))
    repr(torch.softmax(torch.ones(4) @ torch.ones(4, 4), dim=0))


# In a run's process forked ahead: the pipe its request comes on, the pipe it reports its exit code
# on when the run is over (a process with torch loaded takes milliseconds to exit; the server need
# not wait for that before it ends the run), and the pipe its variables go out on for the check.
REQUEST_FD = 3
STATUS_FD = 4
DATA_FD = 5
PF_EXITING = 0x4  # /proc/<pid>/stat flags: the task is in exit and runs no code of its own


class Child:
    """The next run's process, forked ahead, and the supervisor's ends of its pipes."""

    def __init__(self, pid: int, request_w: int, status_r: int, data_r: int):
        self.pid = pid
        self.request_w = request_w
        self.status_r = status_r
        self.data_r = data_r
        self.data = bytearray()
        self.data_over = False

    def send(self, line: bytes) -> None:
        with contextlib.suppress(OSError):  # a child that is gone shows as exited
            write_all(self.request_w, line + b"\n")
        os.close(self.request_w)

    def _take_data(self) -> bool:
        """Reads what waits on the data pipe; False at its end."""
        chunk = os.read(self.data_r, CHUNK)
        if not chunk:
            return False
        if len(self.data) + len(chunk) > DATA_LIMIT + CHUNK:
            self.data_over = True
        else:
            self.data += chunk
        return True

    def wait(self, *, watch_stdin: bool) -> tuple[str, int | None]:
        """Until the run is over: ("reported", exit code) when its process says it is done,
        ("exited", None) when it ended without saying so, ("worker gone", None) when stdin closes
        first (nobody enforces the run's limits any more; the request's second line may wait
        there meanwhile, so only a hang-up counts). The data pipe is read meanwhile, so a large
        namespace never blocks the run."""
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pidfd = None  # an older kernel: the status pipe's end of file stands in for it
        poller = select.poll()
        poller.register(self.status_r, select.POLLIN)
        poller.register(self.data_r, select.POLLIN)
        if watch_stdin:
            poller.register(0, 0)  # POLLHUP and POLLERR only
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        pending = b""
        try:
            while True:
                for fd, events in poller.poll():
                    if fd == self.data_r and not self._take_data():
                        poller.unregister(self.data_r)
                    elif fd == self.status_r:
                        data = os.read(self.status_r, CHUNK)
                        # The run's code can write here too: anything but an exit code line is
                        # ignored (one that writes an exit code ends its own run early, no more).
                        *lines, pending = (pending + data).split(b"\n")
                        pending = pending[-16:]
                        for line in lines:
                            if line.isdigit() and int(line) <= 255:
                                return "reported", int(line)
                        if not data:
                            poller.unregister(self.status_r)
                            if pidfd is None:
                                return "exited", None
                    elif fd == pidfd:
                        return "exited", None
                    elif fd == 0 and events & (select.POLLHUP | select.POLLERR):
                        return "worker gone", None
        finally:
            os.close(self.status_r)
            if pidfd is not None:
                os.close(pidfd)

    def take_rest(self) -> bytes | None:
        """Once every process of the run is gone: the rest of the data pipe, and the whole (None
        when it was over the limit)."""
        with contextlib.suppress(OSError):
            while self._take_data():
                pass
        os.close(self.data_r)
        return None if self.data_over else bytes(self.data)


def fork_child(*, warm: bool) -> Child:
    """Forks the next run's process before its request comes, so a run does not wait for the fork
    (a copy of a process with torch loaded takes milliseconds) nor for its streams to be set up,
    and so the process never holds what the supervisor reads afterwards."""
    request_r, request_w = os.pipe()
    status_r, status_w = os.pipe()
    data_r, data_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 70
        with contextlib.suppress(BaseException):
            # Out of the way of the moves below first, then into place.
            request_r, status_w, data_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (request_r, status_w, data_w))
            os.dup2(request_r, REQUEST_FD, inheritable=False)
            os.dup2(status_w, STATUS_FD, inheritable=False)
            os.dup2(data_w, DATA_FD, inheritable=False)
            code = child(warm=warm) & 0xFF
            os.write(STATUS_FD, f"{code}\n".encode())
        os._exit(code)
    os.close(request_r)
    os.close(status_w)
    os.close(data_w)
    return Child(pid, request_w, status_r, data_r)


def child(*, warm: bool) -> int:
    """The process of one run, forked ahead: back to a fresh interpreter's state, its streams set
    up, then it waits for the request and runs it."""
    for sig, handler in STARTING_HANDLERS.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    os.closerange(DATA_FD + 1, 1 << 16)
    set_dumpable(1)
    streams = Streams()
    if warm:
        # While it waits: the pages a typical run touches are copied now (a fork shares them until
        # written, and merely using an object writes its reference count), not while the run runs.
        warm_up()
    chunks = []
    while chunk := os.read(REQUEST_FD, CHUNK):
        chunks.append(chunk)
    os.close(REQUEST_FD)
    if not chunks:
        return 0  # the sandbox is closing
    request = json.loads(b"".join(chunks).decode("utf-8"))
    # A fork copies the server's random state: every run would draw the same numbers. Seeded only
    # now, when the run starts, from the kernel's entropy.
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    return run_program(request, streams, DATA_FD)


def stop_run(*, spare: int = 0) -> None:
    """Kills every process in the sandbox but this one (init) and `spare`, and waits until each of
    their tasks is gone or in exit, where it runs nothing of its own: from then on nothing of the
    run can write a byte, though the processes may still be releasing their memory (kill_all waits
    for that)."""
    kill_others_until(task_dying, spare=spare)


def task_dying(pid: str) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True  # gone
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone
        if fields[0] not in ("Z", "X") and not int(fields[6]) & PF_EXITING:
            return False
    return True

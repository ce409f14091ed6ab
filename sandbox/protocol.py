"""The worker's side of the output protocol, shared by every backend: what the harness reads on
stdin (`request_payload`), the supervision of the sandbox's stdout (`supervise`), and the one rule
for what status and reason a finished run gets (`run_result`).

The sandbox's stdout carries JSON lines from the harness (sandbox/harness/), but the
learner's code can write to that fd too, so nothing on it is trusted: each line is checked for
shape and size (the Collector, collector.py), the run's end is the end line that carries its nonce
(EndLine, end_line.py), and the limits (output cap, wall deadline) are enforced here, by killing
the sandbox, whatever the harness did.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from .base import LIMIT_FACTS, Event, EventSink, Limits, RunRequest, RunResult
from .collector import Collector, size_words
from .end_line import EndLine

STDERR_TAIL = 4000


def request_payload(
    request: RunRequest, *, address_space: bool, processes: bool, nonce: str, cpu_s: int | None = None
) -> bytes:
    """What the harness reads on stdin. `nonce`: the run's secret, which the check's process
    writes back on the end line (EndLine) and no process of the run ever holds.
    `address_space`: the harness also caps its address space
    at the memory limit (where no cgroup does it; never with a GPU, whose driver maps far more).
    `processes`: the harness also caps processes with RLIMIT_NPROC, which the kernel counts per
    user namespace and uid: right in a sandbox with a user namespace of its own (bubblewrap), wrong
    in a container, whose uid is the host's and shared with every other container (there the pids
    cgroup is the limit). `cpu_s`: the harness caps the run's CPU seconds (a warm sandbox's run,
    whose sandbox outlives it)."""
    limits = request.limits
    harness_limits = {
        # The probe after the program must end inside the run's wall, which counts from the ready line.
        "wall_s": limits.wall_s,
        "output_bytes": limits.output_bytes,
        "images": limits.images,
        "image_bytes": limits.image_bytes,
    }
    if processes:
        harness_limits["pids"] = limits.pids
    if address_space:
        harness_limits["address_space"] = limits.memory_bytes
    if cpu_s:
        harness_limits["cpu_s"] = cpu_s
    first = {
        "code": request.code,
        "limits": harness_limits,
        "modules": [list(module) for module in request.modules],
        # Whether the program hands its variables over for a check (the learner knows that much).
        "export": bool(request.check_code),
        # Read by the supervisor for the probe after the program (no secret: it holds no answer).
        "probe": request.probe_code if request.check_code else "",
    }
    # Two lines: the harness's supervisor reads the first; the check's own process, once the run's
    # processes are gone, reads the second (the check's source and the run's nonce). Each comes
    # after its length, so each reader reads its own line in large pieces and nothing past it.
    second: dict[str, object] = {"check": request.check_code, "nonce": nonce}
    if request.check_modules:
        # The check's own modules travel with it: the program and the probe never hold them.
        second["modules"] = [list(module) for module in request.check_modules]
    lines = [json.dumps(first).encode(), json.dumps(second).encode()]
    return b"".join(b"%d\n%s\n" % (len(line), line) for line in lines)


def limit_reason(limits: Limits, which: str) -> str:
    return {
        "wall": f"time limit {limits.wall_s:g} s",
        "output": f"output limit {size_words(limits.output_bytes)}",
        "memory": f"memory limit {size_words(limits.memory_bytes)}",
        "pids": f"process limit {limits.pids}",
        "file_size": f"file size limit {size_words(limits.file_size_bytes)}",
        "tmp": f"tmp space limit {size_words(limits.tmp_bytes)}",
        "open_files": f"open files limit {limits.open_files}",
    }[which]


# How long a sandbox may take to start the program (a cold one imports torch first): the wall
# limit is the program's own and counts from its start.
STARTUP_S = 60


def supervise(
    *,
    read: Callable[[], bytes],
    kill: Callable[[], None],
    limits: Limits,
    on_event: EventSink,
    started: float,
    end: EndLine | None = None,
) -> tuple[Collector, bool]:
    """Reads the sandbox's stdout until it closes, killing the sandbox when the output cap or the
    wall deadline is passed. The wall limit is the program's: it counts from the harness's ready
    line (the program starts), and the sandbox's start before it (`started`, a time.monotonic())
    gets STARTUP_S. Returns the collector and whether a deadline was hit."""
    wake = threading.Event()  # the program started, or the stream is over
    collector = Collector(limits, on_event, on_ready=wake.set)
    killed = threading.Event()
    over = threading.Event()  # the stream ended, or the output cap was reached

    def kill_once() -> None:
        if not killed.is_set():
            killed.set()
            kill()

    def reader() -> None:
        try:
            while True:
                try:
                    data = read()
                except (OSError, ValueError):
                    data = b""
                if not data:
                    return
                collector.feed(data)  # nothing more is taken once the output is full
                if collector.output_full and not over.is_set():
                    # Reading goes on, to the end of the stream, while the sandbox is killed:
                    # the engine's attach stream holds a container (and its kill) until what it
                    # carries is read.
                    threading.Thread(target=kill_once, name="sandbox-kill", daemon=True).start()
                    over.set()
                    wake.set()
        finally:
            over.set()
            wake.set()

    thread = threading.Thread(target=reader, name="sandbox-reader", daemon=True)
    thread.start()
    timed_out = False
    while True:
        wake.clear()  # before reading the state, so a change after the read ends the wait below
        if over.is_set():
            break
        ready_at = collector.ready_at
        deadline = ready_at + limits.wall_s if ready_at is not None else started + STARTUP_S
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        wake.wait(timeout=remaining)
    if timed_out:
        kill_once()
    # What is left of a killed sandbox's stream gets a moment to drain; the reader goes on
    # alone after that, until the backend closes the stream.
    thread.join(timeout=10 if timed_out else 1)
    if end is not None:
        collector.check = end.check
    collector.finish()
    return collector, timed_out and not collector.output_full


ERROR_LIMITS = (
    # (exception names, words in its message, the limit it means)
    (("MemoryError", "_ArrayMemoryError", "OutOfMemoryError"), "", "memory"),
    (("RuntimeError",), "can't allocate memory", "memory"),
    (("RuntimeError",), "can't start new thread", "pids"),
    (("BlockingIOError", "OSError", "PermissionError"), "Resource temporarily unavailable", "pids"),
    (("OSError",), "File too large", "file_size"),
    (("OSError",), "No space left on device", "tmp"),
    (("OSError",), "Too many open files", "open_files"),
)


def error_limit(error: Event | None) -> str | None:
    """The limit an exception from the learner's code points to, if any."""
    if error is None:
        return None
    for names, words, which in ERROR_LIMITS:
        if error["ename"] in names and words in error["evalue"]:
            return which
    return None


def run_result(
    *,
    collector: Collector,
    exit_code: int | None,
    timed_out: bool,
    oom_killed: bool,
    limits: Limits,
    started: float,
    stderr_tail: str = "",
    details: dict | None = None,
) -> RunResult:
    """One rule for every backend: what status and reason a finished sandbox gets."""
    duration_ms = int((time.monotonic() - started) * 1000)
    details = dict(details or {})

    def result(status: str, reason: str = "", which: str = "") -> RunResult:
        limit = LIMIT_FACTS.get(which, "none")
        return RunResult(
            status=status, exit_code=exit_code, reason=reason, duration_ms=duration_ms, details=details, limit=limit
        )

    if timed_out and not collector.ready:
        return result("error", f"the sandbox did not start the program within {STARTUP_S} s")
    if timed_out:
        return result("timed_out", limit_reason(limits, "wall"), "wall")
    if collector.output_full:
        return result("failed", limit_reason(limits, "output"), "output")
    if oom_killed:
        return result("failed", limit_reason(limits, "memory"), "memory")
    if not collector.ready:
        tail = stderr_tail.strip()[-STDERR_TAIL:]
        if tail:
            details["stderr"] = tail
        return result("error", f"the sandbox stopped before the program started (exit code {exit_code})")
    if exit_code == 0:
        return result("succeeded")
    which = error_limit(collector.error)
    if which:
        return result("failed", limit_reason(limits, which), which)
    if collector.error is not None:
        return result("failed", f"the program raised {collector.error['ename']}")
    if exit_code is not None and (exit_code < 0 or exit_code > 128):
        sig = -exit_code if exit_code < 0 else exit_code - 128
        return result("failed", f"the program was killed by signal {sig}")
    if collector.events == 0:
        return result("failed", f"the program exited with code {exit_code} before printing anything")
    return result("failed", f"the program exited with code {exit_code}")

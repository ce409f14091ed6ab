"""What every sandbox backend offers the worker.

A backend takes one RunRequest, runs it in isolation through the shared harness
(sandbox/harness/), reports each output event through `on_event` as it arrives, and
returns a RunResult. It never touches the database: the run service owns the Run row.

Warm sandboxes (sandbox/pool.py) sit inside each backend behind this same interface: a run
with an `owner` may run in that learner's warm sandbox; `details["warm"]` says whether it did.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from sandbox import limits as caps

Event = dict[str, Any]
EventSink = Callable[[Event], None]


@dataclass(frozen=True)
class Limits:
    """One limit set for every backend (DESIGN.md), its values from sandbox/limits.py. Exercises
    may lower the wall time, and may raise it only up to WALL_CAP_S."""

    wall_s: float = float(caps.WALL_DEFAULT_S)
    memory_bytes: int = caps.MEMORY_BYTES
    cpus: float = caps.CPUS
    pids: int = caps.PROCESSES
    open_files: int = caps.OPEN_FILES
    file_size_bytes: int = caps.FILE_SIZE_BYTES
    tmp_bytes: int = caps.TMP_BYTES
    # Every writable mount has a size and an inode cap: /tmp, and /dev/shm (POSIX shared memory
    # and semaphores, torch's DataLoader workers) on its own, smaller.
    tmp_inodes: int = caps.TMP_INODES
    shm_bytes: int = caps.SHM_BYTES
    shm_inodes: int = caps.SHM_INODES
    output_bytes: int = caps.OUTPUT_BYTES
    images: int = caps.IMAGES
    image_bytes: int = caps.IMAGE_BYTES

    WALL_CAP_S = float(caps.WALL_CAP_S)


# The sandbox's names for its limits (protocol.limit_reason) -> the limit a Run records.
LIMIT_FACTS = {
    "wall": "time",
    "memory": "memory",
    "output": "output",
    "pids": "processes",
    "file_size": "files",
    "tmp": "files",
    "open_files": "files",
}


@dataclass(frozen=True)
class RunRequest:
    run_id: str
    code: str
    check_code: str = ""
    limits: Limits = field(default_factory=Limits)
    # The exercise's probe (<slug>.probe.py): its functions called on fresh inputs once the program
    # has ended, for the check to judge (sandbox/harness/probe.py). Public like the instructions.
    probe_code: str = ""
    gpu: bool = False
    # The learner the run belongs to: a warm sandbox serves one owner only. Empty: always cold.
    owner: str = ""
    # The course's own modules, (name, source) pairs: importable by name in the learner's code and
    # in the check (courses/content/FORMAT.md, "Course modules").
    modules: tuple[tuple[str, str], ...] = ()
    # The modules the check imports, when they are not `modules`: a learner's run installs their
    # own copy of the course's module for the program and the probe, while the check always judges
    # with the course's reference. Empty: the check gets `modules`.
    check_modules: tuple[tuple[str, str], ...] = ()


@dataclass
class RunResult:
    # One of the Run statuses a sandbox can end in: succeeded, failed, timed_out, error.
    status: str
    exit_code: int | None = None
    reason: str = ""
    duration_ms: int = 0
    # Which limit stopped the run, as the Run records it (runner.models.Run.Limit): "none", "time",
    # "memory", "output", "processes" or "files". The reason says it in words, for people.
    limit: str = "none"
    # Filled by the backend for observability (e.g. container id, warm/cold).
    details: dict[str, Any] = field(default_factory=dict)


class SandboxBackend(Protocol):
    name: str

    def execute(self, request: RunRequest, on_event: EventSink) -> RunResult: ...

    def cleanup_strays(self) -> int:
        """Remove sandboxes left behind by a dead worker; returns how many were removed."""
        ...


class PooledBackend:
    """What every backend does the same way: a run with an owner goes to the owner's warm sandbox
    (the backend's pool, `warm`: a pool.PoolHolder), which falls back to a fresh one; a run with
    none, or with no pool, to a fresh sandbox (`execute_cold`, the backend's own)."""

    name: str
    warm: Any  # pool.PoolHolder (pool imports this module)

    def execute(self, request: RunRequest, on_event: EventSink) -> RunResult:
        pool = self.warm.get() if request.owner else None
        if pool is None:
            return self.execute_cold(request, on_event)
        return pool.execute(request, on_event, cold=lambda: self.execute_cold(request, on_event))

    def execute_cold(self, request: RunRequest, on_event: EventSink) -> RunResult:
        raise NotImplementedError

    def _warm_stop(self, run_id: str) -> None:
        """Stop the run if a warm sandbox of this process runs it (the backend's stop() does the rest)."""
        pool = self.warm.current()
        if pool is not None:
            pool.stop(run_id)


SettingSource = Callable[[str, Any], Any]
_setting_source: SettingSource | None = None


def settings_from(source: SettingSource | None) -> None:
    """Where `setting` reads the platform's RUNNER_* settings: the worker passes Django's
    (runner.apps); plain scripts (benchmarks, the device check) pass nothing and get each default.
    A hook given from above, so this package imports nothing of Django or the platform."""
    global _setting_source
    _setting_source = source


def setting(name: str, default: Any) -> Any:
    source = _setting_source
    return default if source is None else source(name, default)


_cold_lock = threading.Lock()
_cold_slots: tuple[int, threading.Semaphore] | None = None


@contextlib.contextmanager
def cold_slot() -> Iterator[None]:
    """One of RUNNER_COLD_CONCURRENCY places for a cold sandbox in this process, waited for. A
    worker takes many runs at once (most of them warm, waiting on their sandbox), but cold starts
    beyond the machine's cores only make every one of them slower. Also a decorator (each call
    takes a place of its own): `@cold_slot()` on a backend's execute_cold."""
    global _cold_slots
    size = max(1, int(setting("RUNNER_COLD_CONCURRENCY", os.cpu_count() or 2)))
    with _cold_lock:
        if _cold_slots is None or _cold_slots[0] != size:
            _cold_slots = (size, threading.Semaphore(size))
        slots = _cold_slots[1]
    with slots:
        yield

"""Warm sandboxes: a sandbox per active learner that forks a fresh process for each run.

A warm sandbox is an ordinary sandbox of its backend (same namespaces, mounts, limits and
harness) whose harness runs as a server (`harness --serve`): it imports torch, numpy and
matplotlib once, then for each run forks a child that runs the request exactly as a cold sandbox
does, and afterwards kills every process the run left, removes its files and IPC objects, and
checks that nothing it cannot restore was touched. So a run pays for a fork, not for a Python
start and a torch import.

Who shares what:
- a sandbox serves one learner only: it starts as a spare (started ahead, nobody's), is bound to
  the first learner who needs one, and is closed after RUNNER_WARM_IDLE_S without a run, after
  RUNNER_WARM_MAX_AGE_S, or after any run that did not end cleanly (time limit, output cap, a
  sandbox that died, anything the server could not clean up);
- it serves one run at a time: a second run of the same learner at once takes a spare or runs cold,
  and when both have ended the learner keeps one sandbox and the other closes;
- no spare ready, or RUNNER_WARM_MAX sandboxes already in this process: the run goes cold, never
  to another learner's sandbox.

The pool lives in the worker process that runs the sandboxes (one per Celery prefork child),
is made on first use (a pool inherited through a fork is dropped), and is closed at exit. A
worker that dies takes its sandboxes with it: bubblewrap's --die-with-parent, and for containers
stdin closes with the worker's attach socket, the server exits and the engine removes the
container (labels let the sweeper remove any that remain).

This module holds the pool and its books (WarmPool, PoolHolder, WarmSettings); the worker's side of
one warm sandbox, which runs a request in it, is warm_sandbox.py.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from .base import EventSink, Limits, RunRequest, RunResult, setting
from .warm_sandbox import STARTUP_TIMEOUT_S, WarmSandbox

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WarmSettings:
    enabled: bool = True
    spares: int = 2
    max_sandboxes: int = 6
    idle_s: float = 300.0
    max_age_s: float = 3600.0

    @classmethod
    def from_settings(cls) -> WarmSettings:
        return cls(
            enabled=bool(setting("RUNNER_WARM", cls.enabled)),
            spares=int(setting("RUNNER_WARM_SPARES", cls.spares)),
            max_sandboxes=int(setting("RUNNER_WARM_MAX", cls.max_sandboxes)),
            idle_s=float(setting("RUNNER_WARM_IDLE_S", cls.idle_s)),
            max_age_s=float(setting("RUNNER_WARM_MAX_AGE_S", cls.max_age_s)),
        )


def sandbox_shape(request: RunRequest) -> tuple:
    """What a sandbox is made for: every limit but the wall time (each run has its own), and GPU."""
    return (replace(request.limits, wall_s=Limits.wall_s), request.gpu)


class WarmPool:
    """The warm sandboxes of one backend in one worker process.

    The books: every sandbox the pool starts is in exactly one place until it is closed:
    `_starting` (started, not ready yet), `_spares` (ready, nobody's), `_bound` (a learner's,
    waiting for their next run), `_busy` (running a run) or `_closing` (being closed; it leaves
    the list once closed). `_launching` counts starts asked of the backend that have not returned
    a sandbox yet. All of them together never pass RUNNER_WARM_MAX: a sandbox still being closed
    holds its memory, so it counts until it is gone."""

    def __init__(self, *, name: str, start: Callable[[tuple], WarmSandbox], config: WarmSettings):
        self.name = name
        self.config = config
        self._start = start
        self._lock = threading.Lock()
        self._launching = 0
        self._starting: list[WarmSandbox] = []
        self._spares: list[WarmSandbox] = []
        self._bound: dict[tuple, WarmSandbox] = {}
        self._busy: dict[WarmSandbox, str] = {}  # the run each busy sandbox serves
        self._closing: list[WarmSandbox] = []
        self._shapes: set[tuple] = set()
        self.hits = 0
        self.misses = 0
        self.pid = os.getpid()
        self._closed = False
        # Sandboxes start from this one long-lived thread: bubblewrap's --die-with-parent follows
        # the thread that started it, not the process.
        self._jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._starter, name=f"warm-{name}-starter", daemon=True).start()
        threading.Thread(target=self._reaper, name=f"warm-{name}-reaper", daemon=True).start()
        atexit.register(self.close)

    # -- runs --------------------------------------------------------------------------------------
    def execute(self, request: RunRequest, on_event: EventSink, *, cold: Callable[[], RunResult]) -> RunResult:
        """Run warm when this learner's sandbox or a spare is ready, else `cold()`."""
        shape = sandbox_shape(request)
        key = (request.owner, shape)
        sandbox, how = self._take(key, shape, request.run_id)
        if sandbox is None:
            self._log_run("miss", request)
            return cold()
        reusable = False
        result = None
        try:
            self._log_run(how, request, sandbox)
            result, reusable = sandbox.execute(request, on_event)
        finally:
            self._release(key, sandbox, reusable=reusable)
        if result is None:
            logger.warning(
                "warm pool %s: a sandbox died before run %s started; running it cold", self.name, request.run_id
            )
            return cold()
        return result

    def _take(self, key: tuple, shape: tuple, run_id: str) -> tuple[WarmSandbox | None, str]:
        with self._lock:
            self._shapes.add(shape)
            sandbox = self._bound.pop(key, None)
            how = "hit (learner's sandbox)"
            if sandbox is not None and not sandbox.ready:
                self._retire(sandbox)
                sandbox = None
            if sandbox is None:
                spare = next((s for s in self._spares if s.shape == shape and s.ready), None)
                if spare is not None:
                    self._spares.remove(spare)
                    sandbox, how = spare, "hit (spare)"
            if sandbox is None:
                self.misses += 1
            else:
                self.hits += 1
                self._busy[sandbox] = run_id
        self._refill()
        return sandbox, how

    def _release(self, key: tuple, sandbox: WarmSandbox, *, reusable: bool) -> None:
        with self._lock:
            del self._busy[sandbox]
            # The learner's other run (a second press of Run) may have given its sandbox back
            # first: that one stays theirs, and this one closes.
            bound = reusable and not self._closed and sandbox.ready and key not in self._bound
            if bound:
                self._bound[key] = sandbox
            else:
                self._retire(sandbox)
        if bound:
            # The learner's next runs are sent to this host while the sandbox may wait for them.
            _learner_bound(owner=key[0], gpu=bool(key[1][1]), idle_s=self.config.idle_s)
        self._refill()

    def _log_run(self, how: str, request: RunRequest, sandbox: WarmSandbox | None = None) -> None:
        logger.info(
            "warm pool %s: %s for run %s; spares %d (+%d starting), learners %d, busy %d, hits %d, misses %d%s",
            self.name,
            how,
            request.run_id,
            len(self._spares),
            self._launching + len(self._starting),
            len(self._bound),
            len(self._busy),
            self.hits,
            self.misses,
            f"; sandbox {sandbox.id} ready in {sandbox.ready_s:.2f} s, run {sandbox.runs + 1}" if sandbox else "",
        )

    # -- keeping spares ----------------------------------------------------------------------------
    def _total(self) -> int:
        return (
            self._launching
            + len(self._starting)
            + len(self._spares)
            + len(self._bound)
            + len(self._busy)
            + len(self._closing)
        )

    def _refill(self) -> None:
        with self._lock:
            if self._closed or not self._shapes:
                return
            # One start at a time: starting a sandbox costs a Python start and a torch import.
            if self._launching or self._starting or len(self._spares) >= self.config.spares:
                return
            if self._total() >= self.config.max_sandboxes:
                # Make room for a newcomer: the learner's sandbox that waited longest goes first,
                # and the spare starts once it is gone (one at a time, or each call would close
                # another learner's sandbox while the first one is still being removed).
                if self._bound and not self._closing:
                    oldest = min(self._bound, key=lambda k: self._bound[k].last_used)
                    self._retire(self._bound.pop(oldest))
                return
            shape = next(iter(self._shapes))
            self._launching += 1
        self._jobs.put(shape)

    def _starter(self) -> None:
        while True:
            shape = self._jobs.get()
            if shape is None:
                return
            sandbox = None
            if not self._closed:
                try:
                    sandbox = self._start(shape)
                except Exception:
                    logger.exception("warm pool %s: a sandbox could not start", self.name)
            with self._lock:
                self._launching -= 1
                if sandbox is not None:
                    if self._closed:
                        self._retire(sandbox)
                    else:
                        self._starting.append(sandbox)
                        threading.Thread(target=self._await, args=(sandbox,), daemon=True).start()

    def _await(self, sandbox: WarmSandbox) -> None:
        ok = sandbox.wait_ready()
        with self._lock:
            if sandbox not in self._starting:
                return  # the pool closed meanwhile and took it
            self._starting.remove(sandbox)
            if ok and not self._closed:
                self._spares.append(sandbox)
            else:
                self._retire(sandbox)
        if not ok:
            logger.warning("warm pool %s: sandbox %s did not become ready", self.name, sandbox.id)
            time.sleep(1)  # do not spin on a backend that cannot start sandboxes
        else:
            logger.info(
                "warm pool %s: spare started in %.2f s; spares %d", self.name, _ready_s(self), len(self._spares)
            )
        self._refill()

    def _retire(self, sandbox: WarmSandbox) -> None:
        """Closes a sandbox off the run's path (removing a container takes a while); it stays on
        the books, in `_closing`, until it is gone. Called with the lock held."""
        self._closing.append(sandbox)
        threading.Thread(target=self._close_one, args=(sandbox,), daemon=True).start()

    def _close_one(self, sandbox: WarmSandbox) -> None:
        try:
            sandbox.close()
        finally:
            with self._lock:
                self._closing.remove(sandbox)
        self._refill()

    def _reaper(self) -> None:
        while not self._closed:
            time.sleep(min(5.0, max(0.5, self.config.idle_s / 4)))
            now = time.monotonic()
            with self._lock:
                if self._closed:
                    return
                for key, sandbox in list(self._bound.items()):
                    idle = now - sandbox.last_used > self.config.idle_s
                    if idle or not sandbox.ready or now - sandbox.created > self.config.max_age_s:
                        del self._bound[key]
                        self._retire(sandbox)
                for sandbox in list(self._spares):
                    if not sandbox.ready or now - sandbox.created > self.config.max_age_s:
                        self._spares.remove(sandbox)
                        self._retire(sandbox)
            self._refill()

    def stop(self, run_id: str) -> None:
        """Ends a run now (the learner pressed Stop): its sandbox goes with it."""
        with self._lock:
            sandboxes = [s for s, busy_run in self._busy.items() if busy_run == run_id]
        for sandbox in sandboxes:
            sandbox._kill_quietly()

    # -- the end -----------------------------------------------------------------------------------
    def stats(self) -> dict:
        with self._lock:
            return {
                "spares": len(self._spares),
                "starting": self._launching + len(self._starting),
                "learners": len(self._bound),
                "busy": len(self._busy),
                "closing": len(self._closing),
                "hits": self.hits,
                "misses": self.misses,
            }

    def books(self) -> dict:
        """Where every sandbox of the pool is now (one consistent look, for tests and logs)."""
        with self._lock:
            return self._books()

    def _books(self) -> dict:
        return {
            "launching": self._launching,
            "starting": list(self._starting),
            "spares": list(self._spares),
            "bound": list(self._bound.values()),
            "busy": list(self._busy),
            "closing": list(self._closing),
        }

    def sandboxes(self) -> list[WarmSandbox]:
        """The sandboxes waiting for a run: spares and learners' sandboxes."""
        with self._lock:
            return [*self._spares, *self._bound.values()]

    def warm_up(self, request: RunRequest, *, timeout: float = STARTUP_TIMEOUT_S) -> bool:
        """Starts spares for requests shaped like this one and waits until they are ready."""
        with self._lock:
            self._shapes.add(sandbox_shape(request))
        self._refill()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self._spares) >= min(self.config.spares, self.config.max_sandboxes):
                    return True
            time.sleep(0.05)
        return False

    def close(self, *, timeout: float = 30.0) -> None:
        """Closes every sandbox (worker shutdown): the idle ones here and now, the busy ones by
        ending their runs, whose sandboxes then close as any ended run's does. Waits up to
        `timeout` for all of them to be gone."""
        with self._lock:
            self._closed = True
            idle = [*self._starting, *self._spares, *self._bound.values()]
            self._starting, self._spares, self._bound = [], [], {}
            self._closing += idle
            busy = list(self._busy)
        self._jobs.put(None)
        for sandbox in busy:
            sandbox._kill_quietly()
        for sandbox in idle:
            self._close_one(sandbox)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not (self._launching or self._busy or self._closing):
                    return
            time.sleep(0.05)
        logger.warning("warm pool %s: closed with sandboxes still going: %s", self.name, self.stats())


# Who is told that a learner's sandbox now waits in this process for their next run (the runner's
# routing sends that run here). The pool knows nothing of who listens: the app that runs it
# registers its listener (runner.apps), so the sandbox package imports nothing of the platform and
# runs from plain scripts (benchmarks) with no listener at all.
_bound_listeners: list[Callable[..., None]] = []


def learner_bound_listen(listener: Callable[..., None]) -> None:
    """Call `listener(owner=, gpu=, idle_s=)` each time a sandbox is bound to a learner."""
    if listener not in _bound_listeners:
        _bound_listeners.append(listener)


def _learner_bound(*, owner: str, gpu: bool, idle_s: float) -> None:
    for listener in list(_bound_listeners):
        try:
            listener(owner=owner, gpu=gpu, idle_s=idle_s)
        except Exception:
            logger.exception("could not tell that learner %s has a sandbox here", owner)


def _ready_s(pool: WarmPool) -> float:
    with pool._lock:
        times = [s.ready_s for s in pool._spares if s.ready_s is not None]
    return times[-1] if times else 0.0


class PoolHolder:
    """A backend's pool for the current process, made on first use; one inherited through a
    fork (a Celery prefork child) belongs to the parent and is left alone."""

    def __init__(self, *, name: str, start: Callable[[tuple], WarmSandbox]):
        self.name = name
        self.start = start
        self._pool: WarmPool | None = None
        self._lock = threading.Lock()

    def get(self) -> WarmPool | None:
        config = WarmSettings.from_settings()
        if not config.enabled or config.max_sandboxes <= 0:
            return None
        with self._lock:
            if self._pool is None or self._pool.pid != os.getpid():
                self._pool = WarmPool(name=self.name, start=self.start, config=config)
            return self._pool

    def current(self) -> WarmPool | None:
        pool = self._pool
        return pool if pool is not None and pool.pid == os.getpid() else None

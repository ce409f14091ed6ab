"""The warm pool's books (sandbox/pool.py): every sandbox it starts is in exactly one of its
lists until it is closed, and RUNNER_WARM_MAX holds at every instant, whatever runs do at once.

These tests drive a WarmPool with a stand-in for the backend's warm sandbox (an in-process object
that starts, serves and closes at once). That is the one place a stand-in is right: what is tested
is the pool's bookkeeping under every interleaving, not a sandbox, and a real sandbox takes
seconds to start, so a test could reach only a handful of interleavings. Real sandboxes meet the
same pool in test_warm_leaks_api.py, through the API, on both backends.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from sandbox.base import Limits, RunRequest, RunResult
from sandbox.pool import WarmPool, WarmSandbox, WarmSettings

SHAPE_LIMITS = Limits(wall_s=5)


class Registry:
    """What the stand-in backend did: which sandboxes it started, and how often each was closed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started: list[FakeSandbox] = []
        self.closes: Counter = Counter()


class FakeSandbox(WarmSandbox):
    """Starts ready (or, when told, dies before it is ready); a run's code says how it ends."""

    backend_name = "fake"

    def __init__(self, *, shape: tuple, registry: Registry, becomes_ready: bool):
        super().__init__(shape=shape)
        self.registry = registry
        with registry.lock:
            registry.started.append(self)
        if becomes_ready:
            self.ready_s = 0.0
            self._ready.set()
        else:
            self._on_eof()

    def execute(self, request, on_event):
        self.runs += 1
        outcome, pause = request.code.split(":")
        time.sleep(float(pause))
        self.last_used = time.monotonic()
        if outcome == "raises":
            raise RuntimeError("the backend broke mid-run")
        if outcome == "lost":  # the sandbox died before the program started
            self.dead = True
            return None, False
        if outcome == "dies":  # the run hit a limit: the sandbox may not serve again
            self.dead = True
            return RunResult(status="timed_out", details={"warm": True}), False
        return RunResult(status="succeeded", details={"warm": True}), True

    def _kill(self):
        self.dead = True

    def _close(self):
        with self.registry.lock:
            self.registry.closes[self] += 1

    def _send(self, data):
        pass

    def _exit_code(self):
        return 0


def fake_start(registry: Registry, rng: random.Random):
    lock = threading.Lock()

    def start(shape):
        with lock:
            roll = rng.random()
        if roll < 0.1:
            raise OSError("the engine refused to start a sandbox")
        return FakeSandbox(shape=shape, registry=registry, becomes_ready=roll >= 0.2)

    return start


def check_books(pool: WarmPool, registry: Registry) -> None:
    """One consistent look at the pool and the stand-in backend (the pool's lock held, so no
    sandbox moves meanwhile)."""
    with pool._lock, registry.lock:
        books = pool._books()
        closes = Counter(registry.closes)
        started = list(registry.started)
    listed = [s for kind in ("starting", "spares", "bound", "busy", "closing") for s in books[kind]]
    counts = Counter(listed)
    assert all(n == 1 for n in counts.values()), f"a sandbox is in two places: {books}"
    assert set(listed) <= set(started), "the pool lists a sandbox nobody started"
    assert all(n == 1 for n in closes.values()), "a sandbox was closed twice"
    for kind in ("starting", "spares", "bound", "busy"):
        assert not [s for s in books[kind] if closes[s]], f"a closed sandbox is still in {kind}"
    # Started by the backend and neither closed nor on the books: only a start whose sandbox the
    # pool has not received yet.
    unaccounted = [s for s in started if not closes[s] and s not in counts]
    assert len(unaccounted) <= books["launching"], f"leaked: {len(unaccounted)} sandboxes, books {books}"
    total = books["launching"] + len(listed)
    assert total <= pool.config.max_sandboxes, f"{total} sandboxes, RUNNER_WARM_MAX {pool.config.max_sandboxes}"


def wait_until_settled(pool: WarmPool, registry: Registry, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        books = pool.books()
        if not (books["launching"] or books["starting"] or books["busy"] or books["closing"]):
            return
        assert time.monotonic() < deadline, f"the pool did not settle: {books}"
        time.sleep(0.01)


OUTCOMES = ("ok", "ok", "ok", "ok", "dies", "raises", "lost")


@pytest.mark.parametrize("seed", range(6))
def test_its_books_balance_under_random_interleavings_from_many_threads(seed):
    rng = random.Random(seed)
    registry = Registry()
    config = WarmSettings(spares=2, max_sandboxes=rng.choice((2, 3, 5)), idle_s=0.2, max_age_s=rng.choice((0.5, 60)))
    pool = WarmPool(name=f"books-{seed}", start=fake_start(registry, random.Random(seed + 1000)), config=config)
    learners = [f"learner-{i}" for i in range(4)]
    close_after = rng.randrange(100, 300)  # the worker shuts down while runs go on
    steps = Counter()
    steps_lock = threading.Lock()
    failures: list[BaseException] = []
    run_ids = iter(range(1_000_000))
    in_flight: list[str] = []

    def step(thread_rng: random.Random) -> None:
        with steps_lock:
            steps["all"] += 1
            n = steps["all"]
            run_id = f"run-{next(run_ids)}"
        if n == close_after:
            pool.close()
            return
        action = thread_rng.random()
        if action < 0.1 and in_flight:
            pool.stop(thread_rng.choice(in_flight))  # the learner pressed Stop
            return
        outcome = thread_rng.choice(OUTCOMES)
        request = RunRequest(
            run_id=run_id,
            code=f"{outcome}:{thread_rng.choice((0, 0, 0.001, 0.005))}",
            owner=thread_rng.choice(learners),
            limits=SHAPE_LIMITS,
        )
        in_flight.append(run_id)
        try:
            result = pool.execute(request, lambda event: None, cold=lambda: RunResult(status="succeeded"))
            assert result.status in ("succeeded", "timed_out")
        except RuntimeError as e:
            assert outcome == "raises", e
        finally:
            in_flight.remove(run_id)

    def learner_thread(index: int) -> None:
        thread_rng = random.Random(seed * 100 + index)
        try:
            for _ in range(60):
                step(thread_rng)
                check_books(pool, registry)
        except BaseException as e:  # handed to the test's thread
            failures.append(e)

    def auditor() -> None:
        try:
            while not done.is_set():
                check_books(pool, registry)
        except BaseException as e:  # handed to the test's thread
            failures.append(e)

    # Spares first (most of the time: a start may fail, which is one of the interleavings), so the
    # runs meet sandboxes before the pool closes.
    pool.warm_up(RunRequest(run_id="shape", code="", limits=SHAPE_LIMITS), timeout=5)
    done = threading.Event()
    watcher = threading.Thread(target=auditor)
    watcher.start()
    threads = [threading.Thread(target=learner_thread, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    if failures:
        raise failures[0]

    pool.close()
    wait_until_settled(pool, registry)
    check_books(pool, registry)
    books = pool.books()
    assert books == {"launching": 0, "starting": [], "spares": [], "bound": [], "busy": [], "closing": []}
    assert all(registry.closes[s] == 1 for s in registry.started), "every sandbox the pool started was closed once"


def test_two_runs_of_one_learner_at_once_leave_one_sandbox_and_close_the_other():
    registry = Registry()
    config = WarmSettings(spares=2, max_sandboxes=4, idle_s=600)
    pool = WarmPool(
        name="double",
        start=lambda shape: FakeSandbox(shape=shape, registry=registry, becomes_ready=True),
        config=config,
    )
    try:
        assert pool.warm_up(RunRequest(run_id="shape", code="", limits=SHAPE_LIMITS))
        # Pressing Run twice: both runs go at once, each in a sandbox of its own.
        results = []
        threads = [
            threading.Thread(
                target=lambda i=i: results.append(
                    pool.execute(
                        RunRequest(run_id=f"press-{i}", code="ok:0.05", owner="ada", limits=SHAPE_LIMITS),
                        lambda event: None,
                        cold=lambda: RunResult(status="succeeded", details={"warm": False}),
                    )
                )
            )
            for i in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r.details["warm"] for r in results] == [True, True]
        wait_until_settled(pool, registry)
        check_books(pool, registry)
        books = pool.books()
        assert len(books["bound"]) == 1, "the learner keeps one sandbox"
        unclosed = [s for s in registry.started if not registry.closes[s]]
        assert sorted(map(id, unclosed)) == sorted(map(id, books["bound"] + books["spares"] + books["starting"]))
    finally:
        pool.close()
    assert all(registry.closes[s] == 1 for s in registry.started)

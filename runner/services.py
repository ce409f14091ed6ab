"""Writes for runs: submit, execute (in a worker), stop, and sweep.

The path of one run: `run_submit` stores a queued Run and, once the row is committed, queues a
Celery message on the `cpu` or `gpu` queue. A worker's task calls `run_execute`, which claims the
run with a conditional update (so a message delivered twice runs the code once), hands it to the
sandbox backend, records each output event on the row and publishes it, and writes the terminal
status. `run_sweep` ends runs whose worker stopped reporting and removes sandboxes left behind.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import close_old_connections, connection, connections, transaction
from django.utils import timezone

from accounts.models import User
from courses.models import Exercise
from courses.selectors import course_modules_for_exercise
from courses.services.progress import exercise_record_pass
from runner import events, selectors, signals
from runner.models import Run
from runner.sandbox.base import Limits, RunRequest, RunResult

log = logging.getLogger(__name__)

# Events arriving within this window are stored and published together (stream text of the same
# stream is merged), so an endless print costs a few writes a second, not one per line.
FLUSH_INTERVAL_S = 0.1

REASON_BROKER_UNAVAILABLE = "broker unavailable"
REASON_WORKER_LOST = "worker lost"
REASON_WORKER_STOPPED = "worker stopped responding"
REASON_NEVER_STARTED = "no worker picked the run up"
REASON_STOPPED = "stopped by learner"
REASON_PLATFORM_FAULT = "the platform failed to record the run's end (a fault of ours, not of the program)"


class RunCapReached(Exception):
    """The learner has too many runs going, or started too many lately."""

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RunBrokerUnavailable(Exception):
    """The queue could not take the run; the run was ended with status error."""

    def __init__(self, run: Run):
        super().__init__(REASON_BROKER_UNAVAILABLE)
        self.run = run


# --- submit ---------------------------------------------------------------------------------------


def run_submit(*, user: User, exercise: Exercise, code: str) -> Run:
    """Store a queued run and queue it. The caller has checked that the user may run the exercise.

    Raises ValidationError (bad code), RunCapReached (429) or RunBrokerUnavailable (503).
    """
    size = len(code.encode("utf-8", "surrogatepass"))
    if size > settings.RUNNER_MAX_CODE_BYTES:
        raise ValidationError(
            f"Code is {size} bytes; the limit is {settings.RUNNER_MAX_CODE_BYTES} bytes.", code="code_too_large"
        )
    if "\x00" in code:
        raise ValidationError("Code contains a NUL character.", code="code_nul")
    # A GPU exercise goes to a GPU worker while one is alive. With none (none configured, or all
    # down) it runs on a CPU worker rather than waiting "queued" for one: there torch sees no GPU and
    # the exercise's code takes its CPU path, and the exercise's page says so beforehand.
    queue = Run.Queue.GPU if exercise.needs_gpu and selectors.gpu_worker_alive() else Run.Queue.CPU

    with transaction.atomic():
        # One submission per learner at a time: the caps below count rows, and two requests
        # racing past the count would both get in.
        User.objects.select_for_update().filter(pk=user.pk).first()
        _run_caps_check(user=user)
        run = Run.objects.create(
            user=user,
            exercise=exercise,
            code=code,
            queue=queue,
        )
        transaction.on_commit(lambda: _run_enqueue(run=run))
    return run


def _run_caps_check(*, user: User) -> None:
    now = timezone.now()
    since = now - timedelta(seconds=60)
    active, recent = selectors.run_counts_for_caps(user=user, since=since)
    if active >= settings.RUNNER_MAX_ACTIVE_PER_LEARNER:
        raise RunCapReached(
            f"You have {active} runs queued or running; wait for one to finish "
            f"(at most {settings.RUNNER_MAX_ACTIVE_PER_LEARNER} at a time).",
            retry_after_s=2,
        )
    limit = settings.RUNNER_MAX_RUNS_PER_MINUTE
    if recent >= limit:
        # The oldest run inside the window leaves it first; then one more run fits.
        window = selectors.run_created_since(user=user, since=since)
        oldest = window.order_by("-created_at").values_list("created_at", flat=True)[limit - 1]
        wait = (oldest + timedelta(seconds=60) - now).total_seconds()
        raise RunCapReached(
            f"You started {limit} runs in the last minute; wait a moment.", retry_after_s=max(1, math.ceil(wait))
        )


def _run_enqueue(*, run: Run) -> None:
    from runner import routing
    from runner.tasks import run_execute_task

    try:
        # To the host holding the learner's warm sandbox, if any (routing.py), else the shared queue.
        route = routing.route_for(run_id=run.id, owner=str(run.user_id), queue=run.queue)
        run_execute_task.apply_async(args=[str(run.id)], retry=True, **route)
    except Exception as exc:
        # Whatever the transport raises when it cannot connect: the run must not stay queued
        # with no message behind it.
        log.error("could not queue run %s: %s", run.id, exc)
        _run_finish(run_id=run.id, status=Run.Status.ERROR, reason=REASON_BROKER_UNAVAILABLE, from_status=Run.ACTIVE)
        run.refresh_from_db()
        raise RunBrokerUnavailable(run) from exc


# --- stop ------------------------------------------------------------------------------------------


def run_request_stop(*, run: Run) -> Run:
    """A queued run ends at once; a running one ends when its worker sees the flag (within
    RUNNER_HEARTBEAT_S). A finished run is left as it is."""
    if Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).exists():
        _run_finish(run_id=run.pk, status=Run.Status.FAILED, reason=REASON_STOPPED, from_status=(Run.Status.QUEUED,))
    Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(stop_requested=True)
    run.refresh_from_db()
    return run


# --- execute (worker) ------------------------------------------------------------------------------


def run_backend():
    """This process's sandbox backend (RUNNER_BACKEND), built once."""
    from runner.sandbox import backend_shared

    return backend_shared(settings.RUNNER_BACKEND)


def run_execute(*, run_id, worker: str = "", redelivered: bool = False, backend=None) -> None:
    """Run one queued run to its end. Does nothing for a run that is not queued any more.

    A warm run takes milliseconds, so the worker's own part is kept to a few round trips: the
    claim, one read, a write and a publish for output that arrives while the program runs, and one
    write and one publish for the rest of the output and the terminal status together."""
    clock = time.perf_counter()
    now = timezone.now()
    worker = worker or socket.gethostname()
    backend = backend or run_backend()
    claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
        status=Run.Status.RUNNING, started_at=now, heartbeat_at=now, worker=worker, backend=backend.name
    )
    if not claimed:
        if redelivered:
            # The broker hands a message back only when the worker that took it died before
            # acknowledging it; that worker's run was cut short. Ending it here (rather than
            # running it again) keeps a run that kills its worker from looping.
            _run_finish(
                run_id=run_id, status=Run.Status.ERROR, reason=REASON_WORKER_LOST, from_status=(Run.Status.RUNNING,)
            )
        return

    run = Run.objects.select_related("exercise").get(pk=run_id)
    exercise = run.exercise
    request = RunRequest(
        run_id=str(run.pk),
        code=run.code,
        check_code=exercise.check_code,
        limits=Limits(wall_s=float(min(exercise.time_limit_s, Limits.WALL_CAP_S))),
        # The queue says where it went: a GPU exercise with no GPU worker ran on a CPU worker.
        gpu=run.queue == Run.Queue.GPU,
        # A warm sandbox serves one learner only.
        owner=str(run.user_id),
        modules=course_modules_for_exercise(exercise=exercise),
    )
    recorder = _RunRecorder(run_id=run.pk, backend=backend)
    recorder.start()
    claimed_at = time.perf_counter()
    try:
        result = backend.execute(request, recorder.add)
    except Exception as exc:
        log.exception("sandbox failed for run %s", run_id)
        result = RunResult(status=Run.Status.ERROR, reason=f"sandbox failed: {type(exc).__name__}: {exc}"[:500])
    ran_at = time.perf_counter()
    try:
        status = _run_end(run=run, recorder=recorder, result=result)
    except Exception:
        # Whatever broke, the run must not stay `running` until the sweeper finds it, holding
        # one of the learner's places: it ends now, and says the fault was ours.
        log.exception("could not record the end of run %s", run_id)
        _run_end_after_fault(run_id=run_id, recorder=recorder)
        return
    # Where the worker's time went (bench/run_latency.py reads these lines): claiming the run,
    # the sandbox (and in it the run's own process, where the backend knows it), and the last
    # write and publish.
    run_ms = result.details.get("run_ms")
    log.info(
        "run %s %s, %s: claim %.1f ms, sandbox %.1f ms (program %s ms), finish %.1f ms",
        run_id,
        status,
        "warm" if result.details.get("warm") else "cold",
        (claimed_at - clock) * 1000,
        (ran_at - claimed_at) * 1000,
        "-" if run_ms is None else f"{run_ms:.1f}",
        (time.perf_counter() - ran_at) * 1000,
    )


def _run_end(*, run: Run, recorder: _RunRecorder, result: RunResult) -> str:
    """The last write of a run the worker ran: its output, status and summary together. Returns
    the status it wrote."""
    run_id = run.pk
    last_batch = recorder.stop()
    status, reason = result.status, result.reason
    if status not in Run.TERMINAL:
        status, reason = Run.Status.ERROR, f"sandbox returned an unknown status {status!r}"
    if recorder.stop_seen and status != Run.Status.SUCCEEDED:
        status, reason = Run.Status.FAILED, REASON_STOPPED
    ended = _run_finish(
        run_id=run_id,
        status=status,
        reason=reason,
        exit_code=result.exit_code,
        duration_ms=result.duration_ms,
        from_status=(Run.Status.RUNNING,),
        # The last output, and what the dashboards count, in the same write as the status: whoever
        # sees the run ended sees all of it.
        recorder=recorder,
        last_batch=last_batch,
        warm=result.details.get("warm"),
    )
    if ended and status == Run.Status.SUCCEEDED and _check_passed(recorder.events):
        exercise_record_pass(user=run.user, exercise=run.exercise)
    return status


def _run_end_after_fault(*, run_id, recorder: _RunRecorder) -> None:
    """Ends a run whose last write failed: the status and a reason alone (the output stored while
    it ran stays), on a connection that works."""
    try:
        recorder.stop()
    except Exception:
        log.exception("run %s recorder did not stop", run_id)
    connection.close_if_unusable_or_obsolete()
    try:
        _run_finish(
            run_id=run_id, status=Run.Status.ERROR, reason=REASON_PLATFORM_FAULT, from_status=(Run.Status.RUNNING,)
        )
    except Exception:
        log.exception("could not end run %s after a fault; the sweeper will", run_id)


def run_summary_fields(*, outputs: list[dict]) -> dict:
    """The columns the dashboards count: the first error's name and the check's verdict."""
    error = next((e for e in outputs if e.get("type") == "error"), None)
    check = next((e for e in outputs if e.get("type") == "check"), None)
    return {
        "error_name": _column_text(str(error.get("ename") or ""))[:100] if error else "",
        "check_passed": (check.get("passed") is True) if check else None,
    }


def _check_passed(outputs: list[dict]) -> bool:
    return any(event.get("type") == "check" and event.get("passed") is True for event in outputs)


def _run_finish(
    *,
    run_id,
    status: str,
    reason: str,
    from_status: tuple[str, ...],
    exit_code: int | None = None,
    duration_ms: int | None = None,
    recorder: _RunRecorder | None = None,
    last_batch: tuple[int, list[dict]] = (0, []),
    warm: bool | None = None,
) -> bool:
    """Write a terminal status (only over one of `from_status`: a finished run stays finished)
    and tell listeners. With the worker's `recorder`, the same write stores the output
    and its summary, and the same message carries `last_batch`, the events not yet published.
    Returns whether this call ended the run."""
    now = timezone.now()
    fields: dict[str, Any] = {"status": status, "reason": _column_text(reason or "")[:500], "finished_at": now}
    if exit_code is not None:
        fields["exit_code"] = exit_code
    if duration_ms is not None:
        fields["duration_ms"] = max(0, int(duration_ms))
    if recorder is not None:
        fields.update(recorder.row_fields(), **run_summary_fields(outputs=recorder.events), warm=warm)
    with transaction.atomic():
        ended = Run.objects.filter(pk=run_id, status__in=from_status).update(**fields)
        if not ended:
            return False
        if signals.run_finished.has_listeners(Run):
            # In the same transaction: a summary kept from this signal is never ahead of, or
            # behind, the run it counts.
            row = Run.objects.values("user_id", "exercise_id", "check_passed", "limit", "cause").get(pk=run_id)
            signals.run_finished.send(sender=Run, run_id=run_id, status=status, finished_at=now, **row)
    if recorder is not None:
        seq = len(recorder.events)
        status_event = Run(
            status=status, reason=fields["reason"], exit_code=exit_code, duration_ms=fields.get("duration_ms")
        ).status_event()
    else:
        run = selectors.run_snapshot(run_id=run_id)
        if run is None:
            return True
        seq, status_event = len(run.outputs), run.status_event()
    first, batch = last_batch
    events.run_events_publish(run_id=run_id, events=[*enumerate(batch, start=first), (seq, status_event)])
    return True


def _column_text(value: str) -> str:
    # Events come validated from the sandbox's collector (runner/sandbox/protocol.py: UTF-8,
    # lengths, no NUL but in stream text, which is stored as JSON text, see EventListField).
    # PostgreSQL text columns refuse NUL: the stdout/stderr copies, and a reason the platform wrote
    # from an exception's text, show it as U+FFFD.
    return value.replace("\x00", "\ufffd")


def _is_stream(event: dict) -> bool:
    return event.get("type") == "stream" and set(event) == {"type", "name", "text"}


def _merge_streams(batch: list[dict]) -> list[dict]:
    merged: list[dict] = []
    for event in batch:
        if merged and _is_stream(event) and _is_stream(merged[-1]) and merged[-1]["name"] == event["name"]:
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + event["text"]}
        else:
            merged.append(event)
    return merged


class _RunRecorder:
    """Takes events from the backend (any thread) and, from its own thread, stores them on the Run
    row and publishes them at most every FLUSH_INTERVAL_S, touches the heartbeat, and watches the
    stop flag. The backend never waits on the database."""

    def __init__(self, *, run_id, backend):
        self.run_id = run_id
        self.backend = backend
        self.events: list[dict] = []
        self.stdout = ""
        self.stderr = ""
        self.stop_seen = False
        self._pending: list[dict] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"run-{run_id}-recorder", daemon=True)

    def add(self, event: dict) -> None:
        with self._lock:
            self._pending.append(event)
        self._wake.set()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> tuple[int, list[dict]]:
        """Ends the recorder; returns the events it took but did not store or publish (the first
        one's index, and the events), which the run's last write stores with the status."""
        self._done.set()
        self._wake.set()
        self._thread.join()
        return self._take()

    def row_fields(self) -> dict:
        return {"outputs": self.events, "stdout": _column_text(self.stdout), "stderr": _column_text(self.stderr)}

    def _loop(self) -> None:
        heartbeat_s = settings.RUNNER_HEARTBEAT_S
        last_beat = time.monotonic()
        try:
            while not self._done.is_set():
                woke = self._wake.wait(timeout=heartbeat_s)
                if self._done.is_set():
                    break
                if woke:
                    self._wake.clear()
                    # Batch what comes within the interval. A run that ends meanwhile does not wait:
                    # its output is then stored and published once, with its status (most warm
                    # runs end well inside the interval).
                    if self._done.wait(FLUSH_INTERVAL_S):
                        break
                    self._flush()
                if time.monotonic() - last_beat >= heartbeat_s:
                    last_beat = time.monotonic()
                    self._beat()
        except Exception:
            log.exception("run %s recorder stopped", self.run_id)
        finally:
            connection.close()

    def _beat(self) -> None:
        Run.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now())
        if not self.stop_seen and Run.objects.filter(pk=self.run_id, stop_requested=True).exists():
            self.stop_seen = True
            _sandbox_stop(backend=self.backend, run_id=str(self.run_id))

    def _take(self) -> tuple[int, list[dict]]:
        """Moves the pending events onto the run's list; returns the first one's index and them."""
        with self._lock:
            batch, self._pending = self._pending, []
        first = len(self.events)
        batch = _merge_streams(batch)
        self.events.extend(batch)
        cap = settings.RUNNER_TEXT_CAP
        for event in batch:
            if event.get("type") == "stream" and isinstance(event.get("text"), str):
                if event.get("name") == "stderr":
                    self.stderr = (self.stderr + event["text"])[:cap]
                else:
                    self.stdout = (self.stdout + event["text"])[:cap]
        return first, batch

    def _flush(self) -> None:
        first, batch = self._take()
        if not batch:
            return
        # The row first, then the news: a listener that reads the row after a message finds it.
        Run.objects.filter(pk=self.run_id).update(**self.row_fields(), heartbeat_at=timezone.now())
        events.run_events_publish(run_id=self.run_id, events=list(enumerate(batch, start=first)))


def _sandbox_stop(*, backend, run_id: str) -> None:
    """Ends a run's sandbox now, where the backend can (`stop(run_id)`); otherwise the sandbox
    ends at its wall limit and the stray cleanup removes what is left."""
    stop = getattr(backend, "stop", None)
    if stop is None:
        log.warning("backend %s cannot stop run %s early", backend.name, run_id)
        return
    try:
        stop(run_id)
    except Exception:
        log.exception("could not stop run %s", run_id)


# --- sweep -----------------------------------------------------------------------------------------


def run_sweep(*, stale_after_s: float | None = None, queued_max_s: float | None = None, backend=None) -> int:
    """End runs no worker looks after (error, with a reason) and remove sandboxes left behind.
    Returns how many runs it ended."""
    close_old_connections()
    stale_after_s = settings.RUNNER_STALE_AFTER_S if stale_after_s is None else stale_after_s
    queued_max_s = settings.RUNNER_QUEUED_MAX_S if queued_max_s is None else queued_max_s
    ended = 0
    for run in selectors.run_list_stale(stale_after_s=stale_after_s, queued_max_s=queued_max_s):
        reason = REASON_WORKER_STOPPED if run.status == Run.Status.RUNNING else REASON_NEVER_STARTED
        if _run_finish(run_id=run.pk, status=Run.Status.ERROR, reason=reason, from_status=(run.status,)):
            ended += 1
            if run.status == Run.Status.RUNNING:
                # Its worker is gone, but its sandbox may still run (a container outlives a worker).
                _sandbox_stop(backend=backend or run_backend(), run_id=str(run.pk))
    if ended:
        log.warning("sweeper ended %d runs", ended)
    run_sandboxes_cleanup(backend=backend)
    return ended


def run_worker_started(*, worker: str) -> int:
    """A worker (re)starts: runs a previous life of this same worker left running are dead, and
    their sandboxes are strays. Returns how many runs it ended."""
    ended = 0
    if worker:
        for run_id in Run.objects.filter(status=Run.Status.RUNNING, worker=worker).values_list("pk", flat=True):
            if _run_finish(
                run_id=run_id, status=Run.Status.ERROR, reason=REASON_WORKER_LOST, from_status=(Run.Status.RUNNING,)
            ):
                ended += 1
                _sandbox_stop(backend=run_backend(), run_id=str(run_id))
    run_sandboxes_cleanup()
    _sandbox_problems_say()
    # The worker's main process keeps no database connection open while it waits for messages.
    connections.close_all()
    return ended


def _sandbox_problems_say() -> None:
    """Once, loudly, at start: every limit this worker's sandboxes cannot enforce."""
    from runner.sandbox import backend_problems

    for problem in backend_problems(settings.RUNNER_BACKEND):
        log.error("SANDBOX DEGRADED (%s backend): %s", settings.RUNNER_BACKEND, problem)


def run_sandboxes_cleanup(*, backend=None) -> int:
    """Remove sandboxes of runs whose worker died (at worker start, and from the sweeper)."""
    try:
        removed = (backend or run_backend()).cleanup_strays()
    except Exception:
        log.exception("sandbox cleanup failed")
        return 0
    if removed:
        log.warning("removed %d stray sandboxes", removed)
    return removed

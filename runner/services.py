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
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import close_old_connections, connection, connections, transaction
from django.utils import timezone

from accounts.models import User
from courses.models import Exercise
from courses.selectors_own import run_modules
from courses.services.progress import exercise_record_pass
from ecplatform.code import CodeRefusedError, code_check
from runner import events, selectors, signals
from runner.models import Run
from runner.recorder import Recording, RunRecorder, column_text, sandbox_stop
from runner.verdict import RunEnd, failure_line
from sandbox.base import Limits, RunRequest, RunResult

log = logging.getLogger(__name__)

REASON_BROKER_UNAVAILABLE = "broker unavailable"
REASON_WORKER_LOST = "worker lost"
REASON_WORKER_STOPPED = "worker stopped responding"
REASON_NEVER_STARTED = "no worker picked the run up"
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
    try:
        code_check(code)
    except CodeRefusedError as exc:
        raise ValidationError(str(exc), code=exc.reason) from None
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

    try:
        # To the host holding the learner's warm sandbox, if any (routing.py), else the shared queue.
        route = routing.route_for(run_id=run.id, owner=str(run.user_id), queue=run.queue)
        routing.run_send(run_id=run.id, **route)
    except Exception as exc:
        # Whatever the transport raises when it cannot connect: the run must not stay queued
        # with no message behind it.
        log.error("could not queue run %s: %s", run.id, exc)
        _run_finish(run_id=run.id, end=RunEnd.platform(REASON_BROKER_UNAVAILABLE), from_status=Run.ACTIVE)
        run.refresh_from_db()
        raise RunBrokerUnavailable(run) from exc


# --- stop ------------------------------------------------------------------------------------------


def run_request_stop(*, run: Run) -> Run:
    """A queued run ends at once; a running one ends when its worker sees the flag (within
    RUNNER_HEARTBEAT_S). A finished run is left as it is."""
    if Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).exists():
        _run_finish(run_id=run.pk, end=RunEnd.stopped_by_learner(), from_status=(Run.Status.QUEUED,))
    Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(stop_requested=True)
    run.refresh_from_db()
    return run


# --- execute (worker) ------------------------------------------------------------------------------


def run_backend():
    """This process's sandbox backend (RUNNER_BACKEND), built once."""
    from sandbox import backend_shared

    return backend_shared(settings.RUNNER_BACKEND)


def run_execute(*, run_id, worker: str = "", redelivered: bool = False, backend=None) -> None:
    """Run one queued run to its end. Does nothing for a run that is not queued any more.

    A warm run takes milliseconds, so the worker's own part is kept to a few round trips: the
    claim and a publish that says the run is running, one read, a write and a publish for output
    that arrives while the program runs, and one write and one publish for the rest of the output
    and the terminal status together."""
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
            _run_finish(run_id=run_id, end=RunEnd.platform(REASON_WORKER_LOST), from_status=(Run.Status.RUNNING,))
        return
    events.run_running_publish(run_id=run_id)

    run, request = run_request_read(run_id=run_id)
    recorder = RunRecorder(run_id=run.pk, backend=backend)
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
    published_at = time.perf_counter()
    _run_ended_tell(run_id=run_id)
    # Where the worker's time went (bench/run_latency.py reads these lines): claiming the run,
    # the sandbox (and in it the run's own process, where the backend knows it), the last write
    # and publish, and what followed once the learner had the result (the dashboards' count).
    run_ms = result.details.get("run_ms")
    log.info(
        "run %s %s, %s: claim %.1f ms, sandbox %.1f ms (program %s ms), finish %.1f ms, after %.1f ms",
        run_id,
        status,
        "warm" if result.details.get("warm") else "cold",
        (claimed_at - clock) * 1000,
        (ran_at - claimed_at) * 1000,
        "-" if run_ms is None else f"{run_ms:.1f}",
        (published_at - ran_at) * 1000,
        (time.perf_counter() - published_at) * 1000,
    )


def run_request_read(*, run_id) -> tuple[Run, RunRequest]:
    """A claimed run and what its sandbox is asked to do, in reads on the learner's path: the run
    with its exercise, part, course and learner in one, then the modules (courses.selectors_own.
    run_modules): one read for a course whose modules have no parts, four for one whose do."""
    run = Run.objects.select_related("exercise__chapter__course", "user").get(pk=run_id)
    exercise = run.exercise
    # The learner's own copy of the course's modules for the program; the course's for the check.
    modules, check_modules = run_modules(exercise=exercise, user=run.user)
    request = RunRequest(
        run_id=str(run.pk),
        code=run.code,
        check_code=exercise.check_code,
        probe_code=exercise.probe_code,
        limits=Limits(wall_s=float(min(exercise.time_limit_s, Limits.WALL_CAP_S))),
        # The queue says where it went: a GPU exercise with no GPU worker ran on a CPU worker.
        gpu=run.queue == Run.Queue.GPU,
        # A warm sandbox serves one learner only.
        owner=str(run.user_id),
        modules=modules,
        check_modules=check_modules,
    )
    return run, request


def _run_end(*, run: Run, recorder: RunRecorder, result: RunResult) -> str:
    """The last write of a run the worker ran: its output, status, verdict and summary together,
    and the learner's pass with them. Returns the status it wrote."""
    recording = recorder.stop(warm=result.details.get("warm"))
    end = RunEnd.from_sandbox(result, stop_seen=recorder.stop_seen, events=recording.events)
    _run_finish_recorded(run=run, end=end, recording=recording)
    return end.status


def _run_end_after_fault(*, run_id, recorder: RunRecorder) -> None:
    """Ends a run whose last write failed: the status and a reason alone (the output stored while
    it ran stays), on a connection that works."""
    try:
        recorder.stop()
    except Exception:
        log.exception("run %s recorder did not stop", run_id)
    connection.close_if_unusable_or_obsolete()
    try:
        _run_finish(run_id=run_id, end=RunEnd.platform(REASON_PLATFORM_FAULT), from_status=(Run.Status.RUNNING,))
    except Exception:
        log.exception("could not end run %s after a fault; the sweeper will", run_id)


def _error_name(outputs: list[dict]) -> str:
    """The first error's name, as the dashboards count errors."""
    error = next((e for e in outputs if e.get("type") == "error"), None)
    return column_text(str(error.get("ename") or ""))[:100] if error else ""


# --- the terminal write ------------------------------------------------------------------------------
# A run ends exactly once: each of the two functions below writes its end over one of the statuses
# it may end from (a finished run stays finished), tells `run_finished` listeners in the same
# transaction, publishes the status event, then tells `run_ended` listeners. Both return whether
# this call ended the run.


def _run_finish(*, run_id, end: RunEnd, from_status: tuple[str, ...]) -> bool:
    """Ends a run from outside its worker's recording (a Stop while queued, the sweeper, a lost
    worker, a fault): the output already stored stays as it is."""
    if not _run_end_write(run_id=run_id, fields=_run_end_fields(end), from_status=from_status):
        return False
    run = selectors.run_snapshot(run_id=run_id)
    if run is not None:
        events.run_events_publish(run_id=run_id, events=[(len(run.outputs), run.status_event())])
    _run_ended_tell(run_id=run_id)
    return True


def _run_finish_recorded(*, run: Run, end: RunEnd, recording: Recording) -> bool:
    """The worker's last write: the output, its summary, the end and, for a pass, the learner's
    progress in one transaction (whoever sees the run ended sees all of it, and a pass the page
    shows is a pass the learner keeps), then one message with the unpublished events and the
    status."""
    fields = {
        **_run_end_fields(end, recording.events),
        **recording.row_fields(),
        "error_name": _error_name(recording.events),
        "check_passed": end.check_passed,
        "warm": recording.warm,
    }

    def record_pass() -> None:
        if end.passed:
            exercise_record_pass(user=run.user, exercise=run.exercise, code=run.code)

    if not _run_end_write(run_id=run.pk, fields=fields, from_status=(Run.Status.RUNNING,), then=record_pass):
        return False
    status_event = Run(
        status=end.status,
        reason=fields["reason"],
        exit_code=end.exit_code,
        duration_ms=fields.get("duration_ms"),
        limit=end.limit,
        cause=end.cause,
        check_passed=end.check_passed,
        passed=end.passed,
    ).status_event()
    first, batch = recording.unpublished
    seq = len(recording.events)
    events.run_events_publish(run_id=run.pk, events=[*enumerate(batch, start=first), (seq, status_event)])
    return True


def _run_ended_tell(*, run_id) -> None:
    """After the learner has the result: what may wait. A receiver's failure is logged, never the
    run's (the run has ended; what the receiver left to do, it noted in `run_finished`)."""
    for receiver, outcome in signals.run_ended.send_robust(sender=Run, run_id=run_id):
        if isinstance(outcome, Exception):
            log.error(
                "run %s: %s failed after its end", run_id, getattr(receiver, "__name__", receiver), exc_info=outcome
            )


def _run_end_fields(end: RunEnd, events: Sequence[dict] = ()) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "status": end.status,
        "reason": column_text(end.reason or "")[:500],
        "failure": column_text(failure_line(end, events)),
        "limit": end.limit,
        "cause": end.cause,
        "passed": end.passed,
        "finished_at": timezone.now(),
    }
    if end.exit_code is not None:
        fields["exit_code"] = end.exit_code
    if end.duration_ms is not None:
        fields["duration_ms"] = max(0, int(end.duration_ms))
    return fields


def _run_end_write(*, run_id, fields: dict[str, Any], from_status: tuple[str, ...], then=None) -> bool:
    """The terminal write, and `then()` (what commits with it) in its transaction."""
    with transaction.atomic():
        ended = Run.objects.filter(pk=run_id, status__in=from_status).update(**fields)
        if not ended:
            return False
        if then is not None:
            then()
        signals.run_finished.send(sender=Run, run_id=run_id, status=fields["status"], finished_at=fields["finished_at"])
    return True


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
        if _run_finish(run_id=run.pk, end=RunEnd.platform(reason), from_status=(run.status,)):
            ended += 1
            if run.status == Run.Status.RUNNING:
                # Its worker is gone, but its sandbox may still run (a container outlives a worker).
                sandbox_stop(backend=backend or run_backend(), run_id=str(run.pk))
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
            if _run_finish(run_id=run_id, end=RunEnd.platform(REASON_WORKER_LOST), from_status=(Run.Status.RUNNING,)):
                ended += 1
                sandbox_stop(backend=run_backend(), run_id=str(run_id))
    run_sandboxes_cleanup()
    _sandbox_problems_say()
    # The worker's main process keeps no database connection open while it waits for messages.
    connections.close_all()
    return ended


def _sandbox_problems_say() -> None:
    """Once, loudly, at start: every limit this worker's sandboxes cannot enforce."""
    from sandbox import backend_problems

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

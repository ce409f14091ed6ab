"""What the dashboards count once the person has what they asked for.

A write on a learner's path (a quiz answer, a chapter's progress) leaves a note in its own
transaction and asks for its count with `later(count)`. Within a unit of work (a web request, a
Celery task: begun and finished by their signals, connected in TeachingConfig.ready) the count
waits for the unit's end: the response sent, the task's result published. Anywhere else (a shell,
a management command, a test calling a service) it runs at once, in the caller's transaction.

A count must be safe to run after its writer's transaction rolled back and to run twice: the notes
make it so (a count deletes its note first, and counts nothing without one). A process that dies
before the end leaves the note to the sweep (teaching.services.outbox.counts_left).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.db import close_old_connections, connections

log = logging.getLogger(__name__)


class _Unit:
    """The unit of work in progress: the counts waiting for its end, and how many units begun
    within it (a task run eagerly by a request) are still open."""

    def __init__(self):
        self.counts: list[Callable[[], object]] = []
        self.inner = 0


# One per thread, not a context variable: the sync parts of a request (its signals, its view, the
# response's close) run on the request's one thread (the WSGI server's, or under ASGI the thread of
# its ThreadSensitiveContext), but Django sends request_started to sync receivers in a task of its
# own, whose context does not come back to the view's.
_local = threading.local()


def _get() -> _Unit | None:
    return getattr(_local, "unit", None)


def _set(unit: _Unit | None) -> None:
    _local.unit = unit


def later(count: Callable[[], object]) -> None:
    unit = _get()
    if unit is None:
        count()
    else:
        unit.counts.append(count)


def begin_request(**kwargs) -> None:
    """A request starts (request_started). A unit still open here is one whose end never came (a
    streamed response the client left unread, on a thread that serves requests one after another):
    its counts run now."""
    _run(_get())
    _set(_Unit())


def begin_task(**kwargs) -> None:
    """A task starts (task_prerun); within a request (a task run eagerly) it is part of the
    request's unit."""
    unit = _get()
    if unit is None:
        _set(_Unit())
    else:
        unit.inner += 1


def abandon() -> None:
    """Forget the open unit and its counts (their notes wait for the sweep). For tests, whose
    database goes back to its state before them."""
    _set(None)


def finish(**kwargs) -> None:
    """A unit of work has ended (request_finished, task_postrun): at the outermost one's end, run
    what waited for it. A failure is logged and the rest go on; the sweep counts what it left."""
    unit = _get()
    if unit is None:
        return
    if unit.inner:
        unit.inner -= 1
        return
    _set(None)
    _run(unit)


def _run(unit: _Unit | None) -> None:
    if unit is None or not unit.counts:
        return
    for count in unit.counts:
        try:
            count()
        except Exception:
            log.exception("a dashboard count failed; the sweep counts it later")
    # Django closed the request's connection before this receiver (its own comes first); the
    # counts opened another, which follows the same rule (or, under ASGI, stays with a thread
    # that is gone). One inside a transaction (a test's) is its owner's to close.
    if not any(connection.in_atomic_block for connection in connections.all(initialized_only=True)):
        close_old_connections()

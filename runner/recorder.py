"""The worker's side of a running run: takes the sandbox's output events as they come, stores them on
the Run row and publishes them in batches, touches the heartbeat, and watches for a learner's Stop.

The backend calls `RunRecorder.add` from any thread and never waits on the database; the
recorder's own thread does the writes. What it took but did not store yet goes into the run's last
write (runner/services.py), with the terminal status.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone

from runner import events
from runner.models import Run

log = logging.getLogger(__name__)

# Events arriving within this window are stored and published together (stream text of the same
# stream is merged), so an endless print costs a few writes a second, not one per line.
FLUSH_INTERVAL_S = 0.1


def column_text(value: str) -> str:
    # Events come validated from the sandbox's collector (sandbox/collector.py: UTF-8,
    # lengths, no NUL but in stream text, which is stored as JSON text, see EventListField).
    # PostgreSQL text columns refuse NUL: the stdout/stderr copies, and a reason the platform wrote
    # from an exception's text, show it as U+FFFD.
    return value.replace("\x00", "\ufffd")


@dataclass(frozen=True)
class Recording:
    """What the worker recorded of a run, for its last write: every output event, the capped
    stdout/stderr copies, the events not yet published (the first one's index, and them), and
    whether the run went to a warm sandbox."""

    events: list[dict]
    stdout: str
    stderr: str
    unpublished: tuple[int, list[dict]]
    warm: bool | None

    def row_fields(self) -> dict:
        return _output_fields(self.events, self.stdout, self.stderr)


def _output_fields(outputs: list[dict], stdout: str, stderr: str) -> dict:
    """The Run columns that hold a run's output."""
    return {"outputs": outputs, "stdout": column_text(stdout), "stderr": column_text(stderr)}


def _is_stream(event: dict) -> bool:
    return event.get("type") == "stream" and set(event) == {"type", "name", "text"}


def merge_streams(batch: list[dict]) -> list[dict]:
    """Adjacent stream events of the same stream, joined into one."""
    merged: list[dict] = []
    for event in batch:
        if merged and _is_stream(event) and _is_stream(merged[-1]) and merged[-1]["name"] == event["name"]:
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + event["text"]}
        else:
            merged.append(event)
    return merged


class RunRecorder:
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

    def stop(self, *, warm: bool | None = None) -> Recording:
        """Ends the recorder; returns what it recorded, with the events it took but did not store
        or publish, which the run's last write stores with the status."""
        self._done.set()
        self._wake.set()
        self._thread.join()
        unpublished = self._take()
        return Recording(events=self.events, stdout=self.stdout, stderr=self.stderr, unpublished=unpublished, warm=warm)

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
            sandbox_stop(backend=self.backend, run_id=str(self.run_id))

    def _take(self) -> tuple[int, list[dict]]:
        """Moves the pending events onto the run's list; returns the first one's index and them."""
        with self._lock:
            batch, self._pending = self._pending, []
        first = len(self.events)
        batch = merge_streams(batch)
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
        Run.objects.filter(pk=self.run_id).update(
            **_output_fields(self.events, self.stdout, self.stderr), heartbeat_at=timezone.now()
        )
        events.run_events_publish(run_id=self.run_id, events=list(enumerate(batch, start=first)))


def sandbox_stop(*, backend, run_id: str) -> None:
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

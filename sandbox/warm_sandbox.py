"""The worker's side of one warm sandbox (pool.py says what warm sandboxes are and who shares
them): `WarmSandbox` runs one request at a time in a sandbox whose harness serves runs
(`harness --serve`), reading the run's output up to its end line and the server's control
events (ready, the run's exit report, a refusal to serve) from the sandbox's stderr. Each backend
subclasses it to start the sandbox and reach its streams (local.py, docker.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import secrets
import threading
import time

from .base import EventSink, RunRequest, RunResult
from .protocol import STDERR_TAIL, EndLine, request_payload, run_result, supervise

logger = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120


class WarmSandbox:
    """The worker's side of one warm sandbox. A backend subclass starts the sandbox and feeds
    `_on_stdout`, `_on_stderr` and `_on_eof` from its streams; `_send`, `_kill`, `_close` and
    `_exit_code` reach the sandbox."""

    backend_name = ""

    def __init__(self, *, shape: tuple):
        self.shape = shape
        self.id = secrets.token_hex(4)
        self.created = time.monotonic()
        self.last_used = self.created
        self.ready_s: float | None = None
        self.runs = 0
        self.dead = False
        self.broken = ""
        self._ready = threading.Event()
        self._inbox: queue.Queue = queue.Queue()
        self._stderr_partial = b""
        self._diagnostics = bytearray()

    # -- fed by the backend's stream readers ---------------------------------------------------
    def _on_stdout(self, data: bytes) -> None:
        self._inbox.put(("out", data))

    def _on_stderr(self, data: bytes) -> None:
        lines = (self._stderr_partial + data).split(b"\n")
        self._stderr_partial = lines.pop()
        for line in lines:
            event = _control(line)
            if event is None:
                if len(self._diagnostics) < STDERR_TAIL * 4:
                    self._diagnostics += line + b"\n"
            elif event["type"] == "idle":
                self.ready_s = time.monotonic() - self.created
                self._ready.set()
            elif event["type"] == "refused":
                self.broken = str(event.get("message", "refused"))
                logger.warning("warm %s sandbox %s refused to serve: %s", self.backend_name, self.id, self.broken)
            else:
                self._inbox.put(("ctl", event))

    def _on_eof(self) -> None:
        self.dead = True
        self._ready.set()
        self._inbox.put(("eof", None))

    # -- reaching the sandbox (backend subclasses) ---------------------------------------------
    def _send(self, data: bytes) -> None:
        raise NotImplementedError

    def _kill(self) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    def _exit_code(self) -> int | None:
        raise NotImplementedError

    # -- for the pool ----------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._ready.is_set() and not self.dead and not self.broken

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S) -> bool:
        self._ready.wait(timeout)
        return self.ready

    def close(self) -> None:
        self.dead = True
        with contextlib.suppress(Exception):
            self._kill()
        try:
            self._close()
        except Exception:
            logger.exception("could not close warm sandbox %s", self.id)

    def execute(self, request: RunRequest, on_event: EventSink) -> tuple[RunResult | None, bool]:
        """One run in this sandbox. Returns its result (None: the sandbox died before the program
        started, which no program can cause, so the run may start over cold) and whether the
        sandbox may serve again."""
        limits = request.limits
        end = EndLine()
        payload = request_payload(
            request,
            address_space=self.address_space,
            processes=self.processes,
            nonce=end.nonce,
            cpu_s=int(limits.wall_s) + 5,
        )
        ooms = self.oom_kills()
        # The run's limits start now, not when the sandbox started.
        started = time.monotonic()
        self.runs += 1
        try:
            self._send(payload)
        except OSError:
            self._on_eof()
        stream = _RunStream(self, end)
        collector, timed_out = supervise(
            read=stream.read, kill=self._kill_quietly, limits=limits, on_event=on_event, started=started, end=end
        )
        self.last_used = time.monotonic()
        reusable = (
            stream.ended and not stream.tainted and not end.trailing and not timed_out and not collector.output_full
        )
        exit_code = stream.exit_code
        if not stream.ended:
            self._kill_quietly()
            if exit_code is None:
                exit_code = self._exit_code()
            if not collector.ready and not timed_out and collector.events == 0:
                return None, False
        oom = stream.oom or (ooms is not None and (self.oom_kills() or 0) > ooms)
        result = run_result(
            collector=collector,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom,
            limits=limits,
            started=started,
            stderr_tail=bytes(self._diagnostics).decode("utf-8", "replace"),
            details={"backend": self.backend_name, "warm": True, "sandbox": self.id, "run_ms": stream.run_ms},
        )
        return result, reusable

    def oom_kills(self) -> int | None:
        """The sandbox's count of processes killed for memory, where the worker reads it (None:
        the server reports it itself)."""
        return None

    # Which limits the harness sets itself (protocol.request_payload): the backend's choice.
    address_space = True
    processes = True

    def _kill_quietly(self) -> None:
        self.dead = True
        with contextlib.suppress(Exception):
            self._kill()


def _control(line: bytes) -> dict | None:
    try:
        event = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(event, dict) and event.get("type") in ("idle", "exited", "refused"):
        return event
    return None


class _RunStream:
    """The sandbox's stdout for one run, up to the supervisor's end line (EndLine: it carries the
    run's nonce, so a run cannot forge it), and the run's exit report from the control channel. The
    run is over when both have come (they travel on different pipes), or the sandbox is gone."""

    def __init__(self, sandbox: WarmSandbox, end: EndLine):
        self.sandbox = sandbox
        self.end = end
        self.exited = False
        self.tainted = False
        self.exit_code: int | None = None
        self.oom = False
        self.run_ms: float | None = None

    @property
    def ended(self) -> bool:
        return self.end.seen and self.exited

    def read(self) -> bytes:
        while not self.ended:
            kind, value = self.sandbox._inbox.get()
            if kind == "eof":
                # Left for the next read: the sandbox is gone for good.
                self.sandbox._inbox.put(("eof", None))
                return self.end.flush()
            if kind == "ctl" and value.get("type") == "exited" and not self.exited:
                self.exited = True
                code = value.get("exit_code")
                self.exit_code = code if isinstance(code, int) else None
                self.oom = value.get("oom") is True
                run_ms = value.get("run_ms")
                self.run_ms = float(run_ms) if isinstance(run_ms, int | float) else None
                self.tainted = value.get("tainted") is not False
                continue
            if kind == "out":
                out = self.end.take(value)
                if out:
                    return out
        return b""

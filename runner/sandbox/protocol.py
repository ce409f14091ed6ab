"""The worker's side of the output protocol, shared by every backend.

The sandbox's stdout carries JSON lines from the harness (runner/sandbox/harness.py), but the
learner's code can write to that fd too, so nothing on it is trusted: each line is checked for
shape and size, anything else becomes stderr text, and the limits (output cap, wall deadline) are
enforced here, by killing the sandbox, whatever the harness did.

One output budget: every event the Collector lets out (stream, display, error, check) costs its
size against the output cap, every byte that arrives counts against the raw-byte ceiling, and a
line is cut at its maximum length as it arrives, never buffered whole. A display's image counts
against the image caps (number and size) instead; its text counts against the output cap.

Text is made safe here, once, for the database and Redis alike: every string an event carries is
valid UTF-8 (a lone surrogate becomes U+FFFD), cut to its length, and holds no NUL, except a
stream's text, which shows what the program printed (it is stored as JSON text, where NUL is the
escape \\u0000; the run's text columns show it as U+FFFD).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import threading
import time
from collections.abc import Callable

from .base import LIMIT_FACTS, Event, EventSink, Limits, RunRequest, RunResult

OUTPUT_LIMIT_NOTICE = "\n[output limit {} reached: the run was stopped]\n"
MAX_TEXT_PLAIN = 1000
MAX_ENAME = 200
MAX_EVALUE = 10_000
MAX_TRACEBACK_LINES = 200
MAX_MESSAGE = 2000
STDERR_TAIL = 4000
# What an event costs beyond the text it carries (its JSON keys), so that a flood of empty events
# also meets the cap.
EVENT_COST = 64


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
    }
    # Two lines: the harness's supervisor reads the first; the check's own process, forked once the
    # run's processes are gone, reads the second (the check's source and the run's nonce).
    second = {"check": request.check_code, "nonce": nonce}
    return (json.dumps(first) + "\n" + json.dumps(second) + "\n").encode()


class EndLine:
    """Finds the harness's end line in a sandbox's stdout: the line that starts with the run's
    nonce, written by the supervisor once every process of the run is gone. It carries the check's
    verdict, the only one the worker takes (a check event a program writes itself is ignored).
    `reader(read)` wraps a read function: it passes everything before the end line through and
    returns b"" after it."""

    def __init__(self, nonce: str | None = None):
        self.nonce = nonce or secrets.token_hex(16)
        self.prefix = json.dumps({"type": "end", "nonce": self.nonce})[:-1].encode()
        self.seen = False
        self.trailing = False
        self.check: dict | None = None
        self._line_start = True
        # The program's exit code and whether the sandbox killed a process for memory, as the
        # supervisor saw them (None: no end line).
        self.exit_code: int | None = None
        self.oom = False
        self._tail = b""

    def take(self, data: bytes) -> bytes:
        """Feeds bytes; returns those that come before the end line, holding back only a last
        partial line that could still become the start of it (so live output is never held)."""
        if self.seen:
            self.trailing = self.trailing or bool(data)
            return b""
        buffer = self._tail + data
        # The end line starts a line (the supervisor writes a newline before it: a program's last
        # line without one cannot hide it). `lead`: the byte before `buffer` ended a line.
        lead = b"\n" if self._line_start else b""
        at = (lead + buffer).find(b"\n" + self.prefix)
        if at >= 0:
            start = at + 1 - len(lead)
            end = buffer.find(b"\n", start)
            if end < 0:  # the end line is still arriving
                self._tail, self._line_start = buffer[start:], True
                return buffer[:start]
            self._parse(buffer[start:end])
            self.seen = True
            self.trailing = bool(buffer[end + 1 :])
            self._tail = b""
            return buffer[:start]
        cut = buffer.rfind(b"\n") + 1
        partial = buffer[cut:]
        if partial and (cut or self._line_start) and self.prefix.startswith(partial):
            self._tail, self._line_start = partial, True
            return buffer[:cut]
        self._tail = b""
        if buffer:
            self._line_start = buffer.endswith(b"\n")
        return buffer

    def flush(self) -> bytes:
        """At the end of the stream: what was held back, when no end line came."""
        rest, self._tail = (b"" if self.seen else self._tail), b""
        return rest

    def _parse(self, line: bytes) -> None:
        try:
            end = json.loads(line)
        except ValueError:
            return
        if not isinstance(end, dict):
            return
        check = end.get("check")
        if isinstance(check, dict) and isinstance(check.get("passed"), bool) and isinstance(check.get("message"), str):
            message = safe_text(check["message"], MAX_MESSAGE)
            self.check = {"type": "check", "passed": check["passed"], "message": message}
        code = end.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            self.exit_code = code
        self.oom = end.get("oom") is True

    def reader(self, read: Callable[[], bytes]) -> Callable[[], bytes]:
        def read_until_end() -> bytes:
            while not self.seen:
                data = read()
                if not data:
                    return self.flush()
                out = self.take(data)
                if out:
                    return out
            return b""

        return read_until_end


def size_words(n: float) -> str:
    """2147483648 -> "2 GiB", 1048576 -> "1 MiB", 20.0 -> "20"."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


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


class Collector:
    """Turns raw sandbox stdout into validated events, counting output against the cap."""

    def __init__(self, limits: Limits, on_event: EventSink):
        self.limits = limits
        self.on_event = on_event
        self.ready = False
        self.output_full = False
        self.output_bytes = 0
        self.raw_bytes = 0
        self.images = 0
        self.events = 0
        self.error: Event | None = None
        self.check: Event | None = None
        self._partial = bytearray()
        self._discarding = False
        self._lock = threading.Lock()
        # JSON escaping can grow text up to six-fold; images add their base64 size.
        self.max_line = int(limits.image_bytes * 4 / 3) + 64 * 1024
        self.max_raw = 6 * limits.output_bytes + limits.images * self.max_line + 1024**2

    # -- input --------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        """Takes any piece of the stream (a line may come in many pieces, or many in one)."""
        with self._lock:
            if self.output_full:
                return
            self.raw_bytes += len(data)
            if self.raw_bytes > self.max_raw:
                self._stop_for_output()
                return
            start = 0
            while not self.output_full:
                end = data.find(b"\n", start)
                if end < 0:
                    self._keep(data[start:])
                    return
                self._keep(data[start:end])
                if self._discarding:
                    self._discarding = False
                else:
                    self._line(bytes(self._partial))
                self._partial.clear()
                start = end + 1

    def finish(self) -> None:
        """The stream ended: the last unterminated line, then the check result."""
        with self._lock:
            if self._partial and not self.output_full and not self._discarding:
                self._line(bytes(self._partial))
            self._partial.clear()
            if self.check is not None and not self.output_full and self._charge(self.check):
                self._emit(self.check)

    def _keep(self, piece: bytes) -> None:
        if self._discarding:
            self._count(len(piece))
            return
        room = self.max_line - len(self._partial)
        if len(piece) <= room:
            self._partial += piece
            return
        # An overlong line is not ours: what fits goes out as text, the rest counts as output.
        self._partial += piece[:room]
        self._line(bytes(self._partial))
        self._partial.clear()
        self._discarding = True
        self._count(len(piece) - room)

    # -- one line -----------------------------------------------------------------------------
    def _line(self, raw: bytes) -> None:
        if not raw:
            return
        event = self._parse(raw)
        if event is None:
            # Not a line of ours (the program wrote to the protocol fd): its bytes, as text.
            self._stream("stderr", raw.decode("utf-8", "replace") + "\n")
            return
        kind = event["type"]
        if kind == "ready":
            self.ready = True
        elif kind == "stream":
            self._stream(event["name"], event["text"])
        elif kind == "display":
            if self.images < self.limits.images and self._charge(event):
                self.images += 1
                self._emit(event)
        elif kind == "error":
            if self._charge(event):
                if self.error is None:
                    self.error = event
                self._emit(event)
        elif kind == "check":
            # Only the end line carries the verdict (EndLine): a check event on the stream was
            # written by the program, and is dropped.
            pass

    def _parse(self, raw: bytes) -> Event | None:
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        kind = obj.get("type")
        if kind == "ready" and len(obj) == 1:
            return {"type": "ready"}
        if kind == "stream":
            if obj.get("name") in ("stdout", "stderr") and isinstance(obj.get("text"), str):
                return {"type": "stream", "name": obj["name"], "text": utf8_text(obj["text"])}
            return None
        if kind == "display":
            return self._display(obj.get("data"))
        if kind == "error":
            ename, evalue, tb = obj.get("ename"), obj.get("evalue"), obj.get("traceback")
            if not (isinstance(ename, str) and isinstance(evalue, str) and isinstance(tb, list)):
                return None
            if not all(isinstance(line, str) for line in tb):
                return None
            return {
                "type": "error",
                "ename": safe_text(ename, MAX_ENAME),
                "evalue": safe_text(evalue, MAX_EVALUE),
                "traceback": [safe_text(line, MAX_EVALUE) for line in tb[-MAX_TRACEBACK_LINES:]],
            }
        if kind == "check":
            if isinstance(obj.get("passed"), bool) and isinstance(obj.get("message"), str):
                return {"type": "check", "passed": obj["passed"], "message": safe_text(obj["message"], MAX_MESSAGE)}
            return None
        return None

    def _display(self, data) -> Event | None:
        if not isinstance(data, dict):
            return None
        png, text = data.get("image/png"), data.get("text/plain", "")
        if not isinstance(png, str) or not isinstance(text, str):
            return None
        if len(png) > self.limits.image_bytes * 4 / 3 + 4:
            return None
        try:
            head = base64.b64decode(png[:12], validate=True)
        except (binascii.Error, ValueError):
            return None
        if not head.startswith(b"\x89PNG") or not re.fullmatch(r"[A-Za-z0-9+/=]*", png):
            return None
        return {"type": "display", "data": {"image/png": png, "text/plain": safe_text(text, MAX_TEXT_PLAIN)}}

    # -- output -------------------------------------------------------------------------------
    def _stream(self, name: str, text: str) -> None:
        if not text:
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        left = self.limits.output_bytes - self.output_bytes
        if size >= left:
            text = text.encode("utf-8", "surrogatepass")[:left].decode("utf-8", "ignore")
            if text:
                self._emit({"type": "stream", "name": name, "text": text})
            self._stop_for_output()
            return
        self.output_bytes += size
        self._emit({"type": "stream", "name": name, "text": text})

    def _charge(self, event: Event) -> bool:
        """Counts an event that is not stream text against the output cap; False (and the run
        stops) when it does not fit."""
        if event["type"] == "display":
            size = len(event["data"]["text/plain"].encode("utf-8"))  # the image has caps of its own
        else:
            size = len(json.dumps(event, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        size += EVENT_COST
        if self.output_bytes + size > self.limits.output_bytes:
            self._stop_for_output()
            return False
        self.output_bytes += size
        return True

    def _count(self, size: int) -> None:
        self.output_bytes += size
        if self.output_bytes >= self.limits.output_bytes:
            self._stop_for_output()

    def _stop_for_output(self) -> None:
        if self.output_full:
            return
        self.output_full = True
        self.output_bytes = self.limits.output_bytes
        notice = OUTPUT_LIMIT_NOTICE.format(size_words(self.limits.output_bytes))
        self._emit({"type": "stream", "name": "stderr", "text": notice})

    def _emit(self, event: Event) -> None:
        self.events += 1
        self.on_event(event)


def utf8_text(value: str) -> str:
    """Text that UTF-8 can carry: a lone surrogate (JSON's \\ud800 escapes make them) becomes U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def safe_text(value: str, max_chars: int) -> str:
    """A short text from the sandbox as the database and Redis take it anywhere: UTF-8, no NUL,
    at most `max_chars` characters."""
    return utf8_text(value[:max_chars]).replace("\x00", "\ufffd")


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
    wall deadline (counted from `started`, a time.monotonic()) is passed. Returns the collector
    and whether the deadline was hit."""
    collector = Collector(limits, on_event)
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
        finally:
            over.set()

    thread = threading.Thread(target=reader, name="sandbox-reader", daemon=True)
    thread.start()
    over.wait(timeout=max(0.0, started + limits.wall_s - time.monotonic()))
    timed_out = not over.is_set()
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

"""Reading a sandbox's stdout into events (protocol.py supervises the stream; this module judges
each line): the `Collector` and the rules for the text that events carry.

The sandbox's stdout carries JSON lines from the harness (sandbox/harness/), but the
learner's code can write to that fd too, so nothing on it is trusted: each line is checked for
shape and size, and anything else becomes stderr text.

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
import threading
import time
from collections.abc import Callable

from .base import Event, EventSink, Limits

OUTPUT_LIMIT_NOTICE = "\n[output limit {} reached: the run was stopped]\n"
MAX_TEXT_PLAIN = 1000
MAX_ENAME = 200
MAX_EVALUE = 10_000
MAX_TRACEBACK_LINES = 200
MAX_MESSAGE = 2000
# What an event costs beyond the text it carries (its JSON keys), so that a flood of empty events
# also meets the cap.
EVENT_COST = 64


def size_words(n: float) -> str:
    """2147483648 -> "2 GiB", 1048576 -> "1 MiB", 20.0 -> "20"."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n:g} B"


class Collector:
    """Turns raw sandbox stdout into validated events, counting output against the cap."""

    def __init__(self, limits: Limits, on_event: EventSink, on_ready: Callable[[], None] | None = None):
        self.limits = limits
        self.on_event = on_event
        self.on_ready = on_ready
        self.ready = False
        # When the harness said the program starts (time.monotonic()): the wall limit counts from
        # here. Its first ready line only: the program can write protocol lines too.
        self.ready_at: float | None = None
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
            if not self.ready:
                self.ready, self.ready_at = True, time.monotonic()
                if self.on_ready is not None:
                    self.on_ready()
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

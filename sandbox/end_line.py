"""The end line: how the worker knows a run in the sandbox is over, and what its check said.

The harness's supervisor writes it on the sandbox's stdout once every process of the run is gone,
starting with the run's nonce (protocol.request_payload), which no process of the run ever holds,
so a program cannot forge it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from .collector import MAX_MESSAGE, safe_text


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

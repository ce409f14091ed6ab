"""What a run sends the worker while it runs: the protocol channel, the pumps that turn the
program's stdout and stderr into stream events in order, figures and errors."""

from __future__ import annotations

import base64
import codecs
import contextlib
import io
import json
import os
import select
import sys
import threading
import traceback

FILENAME = "<exercise>"
CHUNK = 64 * 1024


class Channel:
    """JSON lines on a private fd, one writer at a time, with the stream output cap."""

    def __init__(self, fd: int, output_bytes: int):
        self.fd = fd
        self.lock = threading.Lock()
        self.left = output_bytes
        self.full = False

    def send(self, event: dict) -> None:
        line = (json.dumps(event, ensure_ascii=True) + "\n").encode()
        with self.lock:
            view = memoryview(line)
            while view:
                try:
                    n = os.write(self.fd, view)
                except OSError:
                    # The worker went away: nobody is listening, stop quietly.
                    os._exit(1)
                view = view[n:]

    def stream(self, name: str, text: str) -> None:
        if not text or self.full:
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size >= self.left:
            text = text.encode("utf-8", "surrogatepass")[: self.left].decode("utf-8", "ignore")
            self.send({"type": "stream", "name": name, "text": text})
            self.left = 0
            self.full = True
            # Past the cap the run stops here; the worker sees the cap reached and says so.
            os._exit(1)
        self.left -= size
        self.send({"type": "stream", "name": name, "text": text})


class Pump(threading.Thread):
    """Turns one pipe into stream events as output arrives.

    The pipe is read only under the pump's lock, by the pump when output arrives and by drain()
    before an event that must follow it (an error, a figure, the end). Whatever the program wrote
    before drain() is either still in the pipe, so drain() sends it, or already read by the pump,
    which holds the lock until it has sent it: the order never depends on how threads are
    scheduled (a polled "is the pump busy?" did, and lost under load)."""

    def __init__(self, read_fd: int, name: str, channel: Channel):
        super().__init__(daemon=True)
        os.set_blocking(read_fd, False)
        self.read_fd = read_fd
        self.name_ = name
        self.channel = channel
        self.lock = threading.Lock()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.ended = False

    def run(self) -> None:
        while not self.ended:
            try:
                select.select([self.read_fd], [], [])
            except (OSError, ValueError):
                return
            self.take()

    def take(self) -> int:
        """Sends what waits in the pipe now (up to CHUNK, one event); returns the bytes read."""
        with self.lock:
            if self.ended:
                return 0
            buf: list = []
            size = 0
            while size < CHUNK:
                try:
                    data = os.read(self.read_fd, CHUNK - size)
                except BlockingIOError:
                    break
                except OSError:
                    data = b""
                if not data:
                    self.ended = True
                    break
                buf.append(data)
                size += len(data)
            self.channel.stream(self.name_, self.decoder.decode(b"".join(buf), final=self.ended))
            return size


def drain(pumps: list) -> None:
    """Sends what the program wrote so far, so the next event comes after it."""
    for stream in (sys.stdout, sys.stderr):
        # A broken stream must not stop the run's report.
        with contextlib.suppress(Exception):
            stream.flush()
    for pump in pumps:
        # In a process forked by the program the pumps are not running (threads do not survive a
        # fork) and their lock may be stuck held: the parent's pumps read what it writes.
        if not pump.is_alive():
            continue
        # Until the pipe is empty; the output cap ends a program that writes faster than this.
        while pump.take():
            pass


class Figures:
    """Open matplotlib figures become PNG display events, on plt.show() and at the end."""

    def __init__(self, channel: Channel, limits: dict, pumps: list):
        self.channel = channel
        self.pumps = pumps
        self.left = int(limits.get("images", 5))
        self.max_bytes = int(limits.get("image_bytes", 2 * 1024**2))

    def flush(self) -> None:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        for num in plt.get_fignums():
            fig = plt.figure(num)
            try:
                self.send(fig)
            finally:
                plt.close(fig)

    def send(self, fig) -> None:
        if self.left <= 0:
            sys.stderr.write("[figure not shown: at most 5 images per run]\n")
            return
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        png = buf.getvalue()
        if len(png) > self.max_bytes:
            sys.stderr.write(f"[figure not shown: PNG over {self.max_bytes // 1024**2} MiB]\n")
            return
        self.left -= 1
        drain(self.pumps)
        data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": repr(fig)}
        self.channel.send({"type": "display", "data": data})


class PyplotHook:
    """Meta-path finder that patches pyplot.show once the learner imports pyplot."""

    def __init__(self, figures: Figures):
        self.figures = figures

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader_exec = spec.loader.exec_module
        figures = self.figures

        def exec_module(module):
            loader_exec(module)
            patch_show(module, figures)

        # This spec's loader runs only this module: wrapping its method shows each figure as drawn.
        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def patch_show(pyplot, figures: Figures) -> None:
    def show(*args, **kwargs):
        figures.flush()

    pyplot.show = show


def learner_traceback(exc: BaseException) -> list[str]:
    """The traceback as the learner should see it: only frames of their own code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
    lines = ["Traceback (most recent call last):"] if frames else []
    lines += [s.rstrip("\n") for s in traceback.format_list(frames)]
    lines += [s.rstrip("\n") for s in traceback.format_exception_only(type(exc), exc)]
    return lines


def error_event(exc: BaseException) -> dict:
    return {
        "type": "error",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": learner_traceback(exc),
    }

"""The only code of ours that runs inside a sandbox. Standard library only.

It reads one JSON line from stdin, {"code", "check", "limits": {...}}, runs the learner's code
as __main__, then the exercise's check, and writes the output protocol as JSON lines on a private
copy of the original stdout:

    {"type": "ready"}                                   (internal: the program is about to start)
    {"type": "stream", "name": "stdout"|"stderr", "text": ...}
    {"type": "display", "data": {"image/png": <base64>, "text/plain": "<Figure ...>"}}
    {"type": "error", "ename", "evalue", "traceback": [...]}
    {"type": "check", "passed": bool, "message": str}

Exit code 0 when the learner's code ran without an exception, 1 when it raised (or the output
cap stopped it), sys.exit()'s code when it called that. The worker trusts none of this blindly:
the learner can write to the protocol fd too, so the worker validates every line and enforces the
limits itself. The harness never imports torch and so never initialises CUDA.
"""

import base64
import codecs
import contextlib
import fcntl
import io
import json
import linecache
import os
import resource
import select
import struct
import sys
import termios
import threading
import time
import traceback

FILENAME = "<exercise>"
CHUNK = 64 * 1024
# Output that arrives within this many seconds of a first chunk goes out as one event.
COALESCE_S = 0.02


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
    """Turns one pipe into stream events as output arrives, a few small writes per event."""

    def __init__(self, read_fd: int, name: str, channel: Channel):
        super().__init__(daemon=True)
        self.read_fd = read_fd
        self.name_ = name
        self.channel = channel
        self.busy = False

    def run(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            try:
                data = os.read(self.read_fd, CHUNK)
            except OSError:
                data = b""
            self.busy = True
            if not data:
                self.channel.stream(self.name_, decoder.decode(b"", final=True))
                self.busy = False
                return
            buf = [data]
            size = len(data)
            eof = False
            while size < CHUNK and select.select([self.read_fd], [], [], COALESCE_S)[0]:
                more = os.read(self.read_fd, CHUNK)
                if not more:
                    eof = True
                    break
                buf.append(more)
                size += len(more)
            self.channel.stream(self.name_, decoder.decode(b"".join(buf), final=eof))
            self.busy = False
            if eof:
                return

    def pending(self) -> bool:
        if self.busy:
            return True
        try:
            return struct.unpack("i", fcntl.ioctl(self.read_fd, termios.FIONREAD, b"\0\0\0\0"))[0] > 0
        except OSError:
            return False


def drain(pumps: list) -> None:
    """Wait until what the program wrote so far has gone out, so events keep their order."""
    for stream in (sys.stdout, sys.stderr):
        # A broken stream must not stop the run's report.
        with contextlib.suppress(Exception):
            stream.flush()
    idle = 0
    for _ in range(5000):
        # Twice idle in a row: a pump between its read() and marking itself busy is caught.
        idle = 0 if any(p.is_alive() and p.pending() for p in pumps) else idle + 1
        if idle == 2:
            return
        time.sleep(0.001)


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

            def show(*args, **kwargs):
                figures.flush()

            module.show = show

        spec.loader.exec_module = exec_module
        return spec


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


def run_check(check_code: str, ns: dict) -> dict:
    try:
        check_ns: dict = {"__name__": "exercise_check"}
        exec(compile(check_code, "<check>", "exec"), check_ns)  # noqa: S102 - running code is the point
        result = check_ns["check"](ns)
        passed, message = result if isinstance(result, tuple) else (result, "")
        return {"type": "check", "passed": passed is True, "message": str(message)[:2000]}
    except BaseException:
        # A check that breaks must not show its internals (or the answer) to the learner.
        return {"type": "check", "passed": False, "message": "The check could not run on this code."}


def set_limits(limits: dict) -> None:
    """Limits that must apply inside the sandbox's own user namespace (RLIMIT_NPROC counts per
    namespace and uid there, so one run's processes never count against another's)."""
    for key, which in (("pids", resource.RLIMIT_NPROC), ("address_space", resource.RLIMIT_AS)):
        value = int(limits.get(key) or 0)
        if value:
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))


def main() -> int:
    request = json.loads(sys.stdin.buffer.readline().decode("utf-8"))
    limits = request.get("limits") or {}
    code = request["code"]
    check_code = request.get("check") or ""

    # The protocol goes to a private copy of the original stdout; fds 1 and 2 become pipes that
    # carry everything the learner's code (and its children) write.
    proto_fd = os.dup(1)
    channel = Channel(proto_fd, int(limits.get("output_bytes", 1024**2)))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    pumps = []
    for fd, name in ((1, "stdout"), (2, "stderr")):
        r, w = os.pipe()
        os.dup2(w, fd)
        os.close(w)
        pump = Pump(r, name, channel)
        pump.start()
        pumps.append(pump)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False), encoding="utf-8")

    set_limits(limits)
    os.environ["MPLBACKEND"] = "Agg"
    figures = Figures(channel, limits, pumps)
    sys.meta_path.insert(0, PyplotHook(figures))

    lines = code.splitlines(keepends=True)
    linecache.cache[FILENAME] = (len(code), None, lines, FILENAME)
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": FILENAME}
    exit_code = 0
    raised = False
    channel.send({"type": "ready"})
    try:
        exec(compile(code, FILENAME, "exec"), ns)  # noqa: S102 - running code is the point
    except SystemExit as e:
        exit_code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    except BaseException as e:
        raised = True
        exit_code = 1
        drain(pumps)
        channel.send(error_event(e))
    try:
        figures.flush()
    except Exception as e:
        channel.send(error_event(e))
    if check_code and not raised and exit_code == 0:
        drain(pumps)
        result = run_check(check_code, ns)
        drain(pumps)
        channel.send(result)

    # Close our ends of the output pipes and let the pumps drain. A child that keeps a copy open
    # must not hold the run: the pumps get a moment, then the run ends (and the sandbox with it).
    drain(pumps)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for t in pumps:
        t.join(timeout=0.2)
    return exit_code


if __name__ == "__main__":
    os._exit(main())

"""The only code of ours that runs inside a sandbox. Standard library only.

It runs as the sandbox's PID 1, a supervisor that nothing in the sandbox can signal, trace or read
(the kernel drops signals to a namespace's init from inside; the process is not dumpable). Cold, it
serves one request; warm (`--serve`), it imports torch, numpy and matplotlib once and serves one
request after another. For each request it keeps two children forked ahead (before the request is
read): one runs the learner's code as __main__; when that process is done, the supervisor kills
every other process of the run, then hands the other one (`Checker`), which held nothing of the
run until then, the data the learner's code left (its module globals, converted to plain values:
see `encode`), on which it runs the exercise's check, never on live objects.

A request is two JSON lines on stdin, each after a line with its length in bytes (`read_frame`):
{"code", "limits", "modules", "export"}, which the
supervisor reads and hands to the run's process, then {"check", "nonce"}, which the supervisor
never reads: the check's own process reads it once the run's processes are gone (so no process
forked from the supervisor later can find the check's source or the nonce in its memory).
What comes back is JSON lines on stdout, the output protocol:

    {"type": "ready"}                                   (internal: the program is about to start)
    {"type": "stream", "name": "stdout"|"stderr", "text": ...}
    {"type": "display", "data": {"image/png": <base64>, "text/plain": "<Figure ...>"}}
    {"type": "error", "ename", "evalue", "traceback": [...]}
    {"type": "end", "nonce", "check": {"passed", "message"} | null, "exit_code", "oom"}
                                                        (the check's process, last)

The learner's processes can write to stdout too, so the worker trusts none of it blindly: it
validates every line, enforces the limits itself, and takes the check's verdict only from the end
line, which carries the run's nonce (which no process of the run ever held) and is written once
every process of the run is gone. The exit code is the learner's program's: 0 when it ran without
an exception, 1 when it raised (or the output cap stopped it), sys.exit()'s code when it called
that. The supervisor imports torch, numpy and matplotlib at its start (warm, or cold for a run with
a check), so the run's and the check's processes forked from it do not; it never initialises CUDA
(a GPU sandbox's run process does, to cap its share of GPU memory).
"""

import base64
import codecs
import contextlib
import ctypes
import fcntl
import functools
import gc
import io
import json
import linecache
import os
import resource
import select
import shutil
import signal
import stat
import sys
import threading
import time
import traceback
from collections.abc import Callable

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

        spec.loader.exec_module = exec_module
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


def set_limits(limits: dict) -> None:
    """The rlimits the worker asks for (sandbox/protocol.py says which backend asks for
    which): set here, inside the sandbox, because RLIMIT_NPROC counts per user namespace and uid,
    so in a sandbox with a user namespace of its own one run's processes never count against
    another's."""
    for key, which in (
        ("pids", resource.RLIMIT_NPROC),
        ("address_space", resource.RLIMIT_AS),
        ("cpu_s", resource.RLIMIT_CPU),
    ):
        value = int(limits.get(key) or 0)
        if value:
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))


def leave_if_forked(run_pid: int, code: int) -> None:
    """A process the program forked (os.fork) that reaches the end of the program leaves at once:
    only the run's own process reports errors and figures and hands over its variables. (A fork
    bomb's thousands of copies would otherwise each format a traceback on the run's one CPU.)"""
    if os.getpid() != run_pid:
        os._exit(code)


class Streams:
    """A run's standard streams. The protocol goes to a private copy of the original stdout; stdin
    reads /dev/null; fds 1 and 2 become pipes that carry everything the learner's code (and its
    children) write, turned into stream events by a pump each. Set up before the request is known
    (the process is forked ahead), so the output cap is set afterwards."""

    def __init__(self):
        self.channel = Channel(os.dup(1), 0)
        self.devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(self.devnull, 0)
        self.pumps = []
        for fd, name in ((1, "stdout"), (2, "stderr")):
            r, w = os.pipe()
            os.dup2(w, fd)
            os.close(w)
            pump = Pump(r, name, self.channel)
            pump.start()
            self.pumps.append(pump)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False), encoding="utf-8")


# --- the course's modules ------------------------------------------------------------------------


class CourseModules:
    """Meta-path finder and loader for the course's own modules (RunRequest.modules): `import
    name` runs the module's source, so a run pays only for the modules it imports."""

    def __init__(self, modules):
        self.sources = {}
        for item in modules or ():
            if isinstance(item, list | tuple) and len(item) == 2 and all(isinstance(x, str) for x in item):
                self.sources[item[0]] = item[1]

    def find_spec(self, name, path=None, target=None):
        if name not in self.sources:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, self, origin=f"<{name}>")

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        source = self.sources[module.__name__]
        filename = f"<{module.__name__}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the course's own code


def install_modules(modules) -> None:
    finder = CourseModules(modules)
    if finder.sources:
        sys.meta_path.insert(0, finder)


# --- what the check reads: the learner's variables as data ----------------------------------------
#
# The learner's process encodes its module globals as JSON (names starting with "_" and modules left
# out); the check's process decodes them into plain values. Nothing in the encoding can make the
# decoder run code: JSON, base64 and numbers, turned back into numbers, strings, containers, numpy
# arrays and torch tensors; a torch module becomes its class name and tensors (ModuleData), anything
# else its class name and repr (Opaque). So a check can never call the learner's code.

DATA_LIMIT = 32 * 1024**2
MAX_DEPTH = 20
MAX_INT_DIGITS = 4000
OPAQUE_TEXT = 200


class Encoder:
    def __init__(self, limit: int = DATA_LIMIT):
        self.left = limit

    def value(self, v, depth: int = 0):
        if depth > MAX_DEPTH or self.left <= 0:
            return self.opaque(v, "not kept: too deep or too large")
        self.left -= 8
        t = type(v)
        if v is None or t is bool or t is float:
            return v
        if t is int:
            return v if len(str(abs(v))) <= MAX_INT_DIGITS else self.opaque(v, "not kept: too many digits")
        if t is str:
            self.left -= len(v)
            return v if self.left > 0 else self.opaque(v, "not kept: too large")
        if t is bytes or t is bytearray:
            self.left -= len(v) * 4 // 3
            return {"$": "b", "v": base64.b64encode(bytes(v)).decode()} if self.left > 0 else self.opaque(v)
        if t is complex:
            return {"$": "c", "v": [v.real, v.imag]}
        if t is list:
            return [self.value(x, depth + 1) for x in v]
        if t is tuple:
            return {"$": "t", "v": [self.value(x, depth + 1) for x in v]}
        if t is set or t is frozenset:
            return {"$": "s", "v": [self.value(x, depth + 1) for x in v]}
        if t is dict:
            return {"$": "d", "v": [[self.value(k, depth + 1), self.value(x, depth + 1)] for k, x in v.items()]}
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(v, torch.Tensor):
            return self.tensor(v)
        if torch is not None and isinstance(v, torch.nn.Module):
            params = [[name, self.tensor(p)] for name, p in v.named_parameters()]
            buffers = [[name, self.tensor(b)] for name, b in v.named_buffers()]
            return {"$": "M", "v": [type(v).__name__, bool(v.training), params, buffers]}
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(v, numpy.ndarray):
            return self.array(v)
        if numpy is not None and isinstance(v, numpy.generic):
            return self.value(v.item(), depth + 1)
        if isinstance(v, bool | int | float | str):  # subclasses (IntEnum, str enums): their plain value
            return self.value(_plain(v), depth + 1)
        return self.opaque(v)

    def array(self, a):
        if a.dtype.kind not in "biufc" or a.dtype.hasobject:
            return self.opaque(a)
        self.left -= a.nbytes * 4 // 3
        if self.left <= 0:
            return self.opaque(a, "not kept: too large")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False) if a.dtype.byteorder == ">" else a
        return {"$": "a", "v": [a.dtype.str, list(a.shape), base64.b64encode(a.tobytes()).decode()]}

    def tensor(self, t):
        torch = sys.modules["torch"]
        try:
            t = t.detach()
            if t.layout != torch.strided or t.is_quantized:
                return self.opaque(t)
            t = t.cpu()
            name = str(t.dtype).removeprefix("torch.")
            try:
                a = t.contiguous().numpy()
            except (TypeError, RuntimeError):  # bfloat16 and other types numpy lacks
                a = t.to(torch.complex64 if t.is_complex() else torch.float32).contiguous().numpy()
        except Exception:
            return self.opaque(t)
        encoded = self.array(a)
        if encoded.get("$") != "a":
            return encoded
        return {"$": "T", "v": [name, *encoded["v"]]}

    def opaque(self, v, text: str | None = None):
        if text is None:
            try:
                text = repr(v)[:OPAQUE_TEXT]
            except Exception:
                text = "?"
        return {"$": "o", "v": [type(v).__name__, text]}


def _plain(v):
    for kind in (bool, int, float, str):
        if isinstance(v, kind):
            return kind(v)
    return v


def encode_namespace(ns: dict) -> bytes:
    encoder = Encoder()
    data = {}
    for name, value in list(ns.items()):
        if not isinstance(name, str) or name.startswith("_") or type(value).__name__ == "module":
            continue
        try:
            data[name] = encoder.value(value)
        except Exception:
            data[name] = encoder.opaque(value, "not kept: could not be read")
    return json.dumps(data).encode()


class ModuleData:
    """A learner's torch.nn.Module as a check sees it: its class name, mode and tensors. It cannot
    be called: the learner's code never runs in the check's process."""

    def __init__(self, type_name: str, training: bool, params: dict, buffers: dict):
        self.type_name = type_name
        self.training = training
        self._params = params
        self._buffers = buffers

    def named_parameters(self):
        return iter(list(self._params.items()))

    def parameters(self):
        return iter(list(self._params.values()))

    def named_buffers(self):
        return iter(list(self._buffers.items()))

    def state_dict(self) -> dict:
        return {**self._params, **self._buffers}

    def __repr__(self) -> str:
        return f"<{self.type_name} module: {len(self._params)} parameters>"


class Opaque:
    """A value a check cannot read (a function, a class, an open file...): its class name and its
    repr, cut."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return self.text


def decode(obj):
    if isinstance(obj, list):
        return [decode(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    kind, v = obj.get("$"), obj.get("v")
    if kind == "t":
        return tuple(decode(x) for x in v)
    if kind == "s":
        items = [decode(x) for x in v]
        try:
            return set(items)
        except TypeError:
            return items
    if kind == "d":
        out = {}
        for key, value in v:
            with contextlib.suppress(TypeError):
                out[decode(key)] = decode(value)
        return out
    if kind == "b":
        return base64.b64decode(v)
    if kind == "c":
        return complex(float(v[0]), float(v[1]))
    if kind == "a":
        return decode_array(*v)
    if kind == "T":
        import torch

        dtype = getattr(torch, str(v[0]), None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError("not a torch dtype")
        return torch.from_numpy(decode_array(*v[1:])).to(dtype)
    if kind == "M":
        type_name, training, params, buffers = v
        return ModuleData(
            str(type_name),
            bool(training),
            {str(k): decode(t) for k, t in params},
            {str(k): decode(t) for k, t in buffers},
        )
    if kind == "o":
        return Opaque(str(v[0]), str(v[1]))
    raise ValueError(f"unknown value kind {kind!r}")


def decode_array(dtype_str, shape, data):
    import numpy

    dtype = numpy.dtype(str(dtype_str))
    if dtype.kind not in "biufc" or dtype.hasobject:
        raise ValueError("not a numeric dtype")
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("negative size")
    return numpy.frombuffer(base64.b64decode(data), dtype=dtype).reshape(shape).copy()


def decode_namespace(data: bytes) -> dict:
    raw = json.loads(data.decode("utf-8"))
    if not isinstance(raw, dict):
        raise ValueError("not a namespace")
    return {str(name): decode(value) for name, value in raw.items()}


# --- one run of the learner's code (in the process forked ahead) -----------------------------------


def run_program(request: dict, streams: Streams, data_fd: int) -> int:
    """Runs the learner's code as __main__ and, when it ended well and the exercise has a check,
    writes its variables (encode_namespace) to `data_fd` for the check's process."""
    limits = request.get("limits") or {}
    code = request["code"]
    channel, pumps, devnull = streams.channel, streams.pumps, streams.devnull
    channel.left = int(limits.get("output_bytes", 1024**2))
    set_limits(limits)
    cap_gpu_memory()
    os.environ["MPLBACKEND"] = "Agg"
    install_modules(request.get("modules"))
    figures = Figures(channel, limits, pumps)
    sys.meta_path.insert(0, PyplotHook(figures))
    if "matplotlib.pyplot" in sys.modules:  # imported ahead by a warm sandbox's server
        patch_show(sys.modules["matplotlib.pyplot"], figures)

    lines = code.splitlines(keepends=True)
    linecache.cache[FILENAME] = (len(code), None, lines, FILENAME)
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": FILENAME}
    exit_code = 0
    raised = False
    run_pid = os.getpid()
    channel.send({"type": "ready"})
    try:
        exec(compile(code, FILENAME, "exec"), ns)  # noqa: S102 - running code is the point
    except SystemExit as e:
        leave_if_forked(run_pid, e.code if isinstance(e.code, int) else 1)
        exit_code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
    except BaseException as e:
        leave_if_forked(run_pid, 1)
        raised = True
        exit_code = 1
        drain(pumps)
        channel.send(error_event(e))
    leave_if_forked(run_pid, exit_code)
    try:
        figures.flush()
    except Exception as e:
        channel.send(error_event(e))
    if request.get("export") and not raised and exit_code == 0:
        with contextlib.suppress(Exception):
            write_all(data_fd, encode_namespace(ns))
    with contextlib.suppress(OSError):
        os.close(data_fd)

    # What the program wrote goes out first (a child that keeps a copy of the pipes open means the
    # pumps never see their end: seen under memory pressure, a last line still in the pipe when the
    # moment below ran out). Then close our ends and let the pumps drain to the end of the pipes; a
    # child that keeps a copy open must not hold the run: the pumps get a moment, then the run ends.
    drain(pumps)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for t in pumps:
        t.join(timeout=0.2)
    return exit_code


def cap_gpu_memory() -> None:
    """On a GPU sandbox (the worker sets EASYCOMPILERS_GPU_MEMORY_FRACTION), the run's process may
    take only that share of its GPU's memory. Here, in the run's own process: CUDA set up in a warm
    server before a fork would not work in its children."""
    fraction = os.environ.get("EASYCOMPILERS_GPU_MEMORY_FRACTION")
    if not fraction:
        return
    with contextlib.suppress(Exception):
        import torch

        if torch.cuda.is_available():
            torch.cuda.set_per_process_memory_fraction(float(fraction), 0)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --- the check (in a process of its own, after the run's processes are gone) -----------------------

CHECK_UNREADABLE = "The check could not read what your code left behind. Keep the names the exercise asks for."
CHECK_BROKEN = "The check could not run on this code."


def run_check(check_code: str, ns: dict) -> dict:
    try:
        check_ns: dict = {"__name__": "exercise_check"}
        exec(compile(check_code, "<check>", "exec"), check_ns)  # noqa: S102 - the exercise's own check
        result = check_ns["check"](ns)
        passed, message = result if isinstance(result, tuple) else (result, "")
        return {"passed": passed is True, "message": str(message)[:2000]}
    except BaseException:
        # A check that breaks must not show its internals (or the answer) to the learner.
        return {"passed": False, "message": CHECK_BROKEN}


def checker(data: bytes | None, modules, limits: dict, *, exit_code: int, oom: bool) -> None:
    """The check's process, once every process of the run is gone: it reads the request's second
    line ({"check", "nonce"}) from stdin itself, so neither the check's source nor the nonce ever
    enters the supervisor's memory (from which the next run's process is forked); runs the check on
    the learner's variables (`data`; None when the program did not end well, so no check runs) and
    writes the end line, which also carries the program's exit code and whether the sandbox killed
    a process for memory (so a cold sandbox's worker need not wait for the sandbox to exit to know
    them); then says so on DONE_FD (its exit, which unmaps torch, takes milliseconds the run need
    not wait for). Never returns."""
    try:
        try:
            second = json.loads(read_frame(0) or b"{}")
        except ValueError:
            second = {}  # no nonce: an end line the worker does not take
        nonce, check_code = str(second.get("nonce", "")), str(second.get("check") or "")
        out = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # what the check prints goes nowhere
            os.dup2(devnull, fd)
        verdict = None
        if check_code and data is not None:
            set_limits({k: v for k, v in limits.items() if k in ("address_space", "cpu_s")})
            install_modules(modules)
            try:
                ns = decode_namespace(data) if data else None
            except Exception:
                ns = None
            verdict = run_check(check_code, ns) if ns is not None else {"passed": False, "message": CHECK_UNREADABLE}
        # A newline first: the run's last line may lack one, and the end line must start a line.
        end = {"type": "end", "nonce": nonce, "check": verdict, "exit_code": exit_code, "oom": oom}
        write_all(out, ("\n" + json.dumps(end) + "\n").encode())
        os.write(DONE_FD, b"1")
    finally:
        os._exit(0)


# In the check's process forked ahead: the pipe the supervisor hands it the run's end on (a JSON
# line, then the learner's variables), and the pipe it says on that its end line is written.
HANDOVER_FD = 3
DONE_FD = 4


class Checker:
    """The next check's process, forked ahead from the supervisor (never from a run's process),
    and the supervisor's ends of its pipes. It waits holding nothing of the run: the run's end, the
    learner's variables and (from stdin) the check and nonce reach it only once every process of
    the run is gone. So the run does not wait for a fork of a process with torch loaded, and a
    check that reads tensors never imports torch a second time (the supervisor did, cold too).

    A run's processes run as the same user, so they may kill it, stop it or lower its rlimits:
    each only loses the learner their own check. The supervisor spares it when it ends the run's
    processes, then uses it only if it is still waiting, untouched; otherwise it forks a fresh one,
    as every check was before."""

    def __init__(self, pid: int, handover_w: int, done_r: int):
        self.pid = pid
        self.handover_w = handover_w
        self.done_r = done_r

    def untouched(self) -> bool:
        """Still alive and waiting (started again if a run stopped it), with the supervisor's
        rlimits."""
        try:
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                return False
            os.kill(self.pid, signal.SIGCONT)
            return all(resource.prlimit(self.pid, which) == resource.getrlimit(which) for which in RLIMITS)
        except (ChildProcessError, ProcessLookupError, OSError):
            return False

    def hand(self, data: bytes | None, modules, limits: dict, *, exit_code: int, oom: bool) -> None:
        head = {"exit_code": exit_code, "oom": oom, "modules": modules, "limits": limits, "data": data is not None}
        with contextlib.suppress(OSError):  # a checker that died says nothing on DONE_FD
            write_all(self.handover_w, json.dumps(head).encode() + b"\n" + (data or b""))
        os.close(self.handover_w)

    def wait_done(self) -> None:
        """Until its end line is written (or it died)."""
        with contextlib.suppress(OSError):
            os.read(self.done_r, 1)
        os.close(self.done_r)

    def discard(self) -> None:
        for fd in (self.handover_w, self.done_r):
            with contextlib.suppress(OSError):
                os.close(fd)


RLIMITS = [getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")]


def fork_checker() -> Checker:
    handover_r, handover_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        with contextlib.suppress(BaseException):
            # Its own pipes into place, and nothing else kept: the supervisor's ends of the run's
            # pipes least of all (a run's process reads its request until every writer is gone).
            handover_r, done_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (handover_r, done_w))
            os.dup2(handover_r, HANDOVER_FD, inheritable=False)
            os.dup2(done_w, DONE_FD, inheritable=False)
            os.closerange(DONE_FD + 1, 1 << 16)
            chunks = []
            while chunk := os.read(HANDOVER_FD, CHUNK):
                chunks.append(chunk)
            if chunks:  # nothing: the sandbox is closing
                head, _, data = b"".join(chunks).partition(b"\n")
                end = json.loads(head)
                del chunks
                checker(
                    data if end["data"] else None,
                    end["modules"],
                    end["limits"],
                    exit_code=end["exit_code"],
                    oom=end["oom"],
                )
        os._exit(0)
    os.close(handover_r)
    os.close(done_w)
    return Checker(pid, handover_w, done_r)


# --- the supervisor -------------------------------------------------------------------------------
#
# PID 1 of the sandbox's PID namespace (so nothing in the sandbox can kill or stop it: the kernel
# drops SIGKILL and SIGSTOP sent to a namespace's init from inside), not dumpable (so a run cannot
# ptrace it or open its /proc files, memory or fds). It keeps two children forked ahead: one runs the
# next request's code as `run_program` does, the other the check (`Checker`). When the run's process
# reports its exit code (or exits) the supervisor kills every other process in the sandbox but the
# check's and waits until each is in exit, where it runs nothing of its own; then the check's
# process runs the check and writes the end line, and the supervisor kills it too. A warm
# supervisor then removes every file the run left in the writable folders and SysV IPC objects, puts
# back the folders' modification times and extended attributes, and checks that what it cannot restore (device
# nodes, folder modes) is untouched; if not, it says "tainted" and exits, and the worker starts over
# cold. Its stderr is the control channel (warm only), which no run can write to (fd 2 is a pipe in
# the child before learner code starts):
#     {"type": "idle"}                         ready for the first request
#     {"type": "exited", "exit_code", "oom", "tainted", "run_ms"}   the run is over and cleaned up
#                                              (run_ms: from the request to the run's end)
#     {"type": "refused", "message"}           cannot serve; the server exits

WRITABLE = ("/tmp", "/dev/shm", "/dev/mqueue", "/dev")  # noqa: S108 - the sandbox's own mounts
PRELOAD = ("torch", "numpy", "matplotlib", "matplotlib.pyplot")
CATCHABLE = [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD)]
# What a fresh Python has (SIGPIPE and SIGXFSZ ignored, SIGINT raising KeyboardInterrupt): a run
# gets these back, so a write past the file size limit raises as in a fresh interpreter.
STARTING_HANDLERS = {sig: signal.getsignal(sig) for sig in CATCHABLE}
PR_SET_DUMPABLE = 4


def control(event: dict) -> None:
    line = (json.dumps(event) + "\n").encode()
    while line:
        line = line[os.write(2, line) :]


def read_line(fd: int) -> bytes:
    """One line from fd, read a byte at a time so nothing past it is taken from the pipe."""
    buf = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b:
            return b""
        if b == b"\n":
            return bytes(buf)
        buf += b


FRAME_DIGITS = 12


def read_frame(fd: int) -> bytes:
    """One line of the request, which the worker frames with its length in bytes on a line before
    it: read in large pieces (a byte at a time, the first line's course modules alone took 14 ms),
    and nothing past it taken from the pipe, as what follows is another process's to read. b"" at
    the end of the input; ValueError for a frame that is not one."""
    head = read_line(fd)
    if not head:
        return b""
    if not head.isdigit() or len(head) > FRAME_DIGITS:
        raise ValueError("the request's frame has no length")
    left, chunks = int(head) + 1, []  # the line and its newline
    while left:
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            return b""
        chunks.append(chunk)
        left -= len(chunk)
    line = b"".join(chunks)
    if line[-1:] != b"\n":
        raise ValueError("the request's line is longer than its frame says")
    return line[:-1]


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, loaded once: every run calls into it (prctl, the IPC wipe)."""
    return ctypes.CDLL(None, use_errno=True)


def set_dumpable(value: int) -> None:
    if libc().prctl(PR_SET_DUMPABLE, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def entry_print(path: str) -> tuple:
    st = os.lstat(path)
    target = os.readlink(path) if stat.S_ISLNK(st.st_mode) else ""
    return (st.st_mode, st.st_uid, st.st_ino, st.st_rdev, target)


def folder_meta(path: str) -> tuple:
    """What a run could leave on a folder itself: its modification time and extended attributes.
    (Not its access time: the supervisor lists every folder after every run itself.)"""
    st = os.lstat(path)
    try:
        xattrs = tuple(sorted((name, os.getxattr(path, name)) for name in os.listxattr(path)))
    except OSError:
        xattrs = ()
    return (st.st_mtime_ns, xattrs)


def snapshot() -> dict:
    """What the writable folders hold when the server is ready: their own mode, modification time
    and extended attributes, and each entry."""
    shot = {}
    for folder in WRITABLE:
        if os.path.isdir(folder) and not os.path.islink(folder):
            shot[folder] = (
                entry_print(folder),
                folder_meta(folder),
                {name: entry_print(os.path.join(folder, name)) for name in os.listdir(folder)},
            )
    return shot


def wipe(shot: dict) -> bool:
    """Removes what a run added to the writable folders and puts back their times and extended
    attributes; False when something cannot be put back (a device node removed or replaced, a
    mode changed, a folder this user does not own touched)."""
    clean = True
    for folder, (own, meta, entries) in shot.items():
        try:
            if entry_print(folder) != own:
                clean = False
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name in entries and entry_print(path) == entries[name]:
                    continue
                if name in entries:
                    clean = False
                remove(path)
            restore_meta(folder, meta)
            clean = clean and folder_meta(folder) == meta
        except OSError:
            clean = False
    return clean and ipc_clear()


def restore_meta(folder: str, meta: tuple) -> None:
    mtime_ns, xattrs = meta
    kept = dict(xattrs)
    with contextlib.suppress(OSError):
        for name in os.listxattr(folder):
            if name not in kept:
                os.removexattr(folder, name)
        for name, value in kept.items():
            os.setxattr(folder, name, value)
    if os.lstat(folder).st_mtime_ns != mtime_ns:
        with contextlib.suppress(OSError):
            os.utime(folder, ns=(os.lstat(folder).st_atime_ns, mtime_ns))


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        # A run may have taken away its own permissions on a folder of its own.
        for root, dirs, _files in os.walk(path):
            for d in dirs:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(root, d), 0o700)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
        shutil.rmtree(path)
    else:
        os.unlink(path)


def ipc_clear() -> bool:
    """SysV shared memory, semaphores and message queues outlive their processes: remove them.
    (POSIX message queues, shared memory and semaphores are files in /dev/mqueue and /dev/shm.)"""
    c = libc()
    ok = True
    for kind, call in (("shm", c.shmctl), ("sem", None), ("msg", c.msgctl)):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                ids = [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
        except OSError:
            continue
        for ipc_id in ids:
            result = c.semctl(ipc_id, 0, 0) if kind == "sem" else call(ipc_id, 0, None)  # IPC_RMID
            ok = ok and result == 0
    return ok


def kill_all() -> None:
    """Every process in the sandbox but this one (init) ends, and is reaped."""
    kill_others_until(lambda pid: False)


def kill_others_until(done: Callable[[str], bool], *, spare: int = 0) -> None:
    """SIGKILL to every process in the sandbox but this one (init) and `spare` (the check's process
    forked ahead), reaping those that have ended, until each one left is `done` (none left:
    always)."""
    me, kept = str(os.getpid()), str(spare)
    for _ in range(2000):
        if spare:
            # One by one, as kill(-1) would take the spared one too; a process forked meanwhile is
            # killed on the next round.
            for pid in os.listdir("/proc"):
                if pid.isdigit() and pid not in (me, kept):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if all(done(pid) for pid in os.listdir("/proc") if pid.isdigit() and pid not in (me, kept)):
            return
        time.sleep(0.0005)
    raise RuntimeError("processes of the run would not end")


def oom_kills() -> int:
    for path, key in (
        ("/sys/fs/cgroup/memory.events", "oom_kill"),
        ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
    ):
        with contextlib.suppress(OSError, ValueError), open(path) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    return 0


def cuda_initialised() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def warm_up() -> None:
    """First calls that set things up lazily, made once here rather than in every run. None of
    them draws a random number (a run starts from the random state a cold start has) or starts a
    thread (OMP_NUM_THREADS=1)."""
    numpy = sys.modules["numpy"]
    torch = sys.modules["torch"]
    numpy.random.seed()
    numpy.ones((4, 4)) @ numpy.ones((4, 4))
    repr(torch.softmax(torch.ones(4) @ torch.ones(4, 4), dim=0))


# In a run's process forked ahead: the pipe its request comes on, the pipe it reports its exit code
# on when the run is over (a process with torch loaded takes milliseconds to exit; the server need
# not wait for that before it ends the run), and the pipe its variables go out on for the check.
REQUEST_FD = 3
STATUS_FD = 4
DATA_FD = 5
PF_EXITING = 0x4  # /proc/<pid>/stat flags: the task is in exit and runs no code of its own


class Child:
    """The next run's process, forked ahead, and the supervisor's ends of its pipes."""

    def __init__(self, pid: int, request_w: int, status_r: int, data_r: int):
        self.pid = pid
        self.request_w = request_w
        self.status_r = status_r
        self.data_r = data_r
        self.data = bytearray()
        self.data_over = False

    def send(self, line: bytes) -> None:
        with contextlib.suppress(OSError):  # a child that is gone shows as exited
            write_all(self.request_w, line + b"\n")
        os.close(self.request_w)

    def _take_data(self) -> bool:
        """Reads what waits on the data pipe; False at its end."""
        chunk = os.read(self.data_r, CHUNK)
        if not chunk:
            return False
        if len(self.data) + len(chunk) > DATA_LIMIT + CHUNK:
            self.data_over = True
        else:
            self.data += chunk
        return True

    def wait(self, *, watch_stdin: bool) -> tuple[str, int | None]:
        """Until the run is over: ("reported", exit code) when its process says it is done,
        ("exited", None) when it ended without saying so, ("worker gone", None) when stdin closes
        first (nobody enforces the run's limits any more; the request's second line may wait
        there meanwhile, so only a hang-up counts). The data pipe is read meanwhile, so a large
        namespace never blocks the run."""
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pidfd = None  # an older kernel: the status pipe's end of file stands in for it
        poller = select.poll()
        poller.register(self.status_r, select.POLLIN)
        poller.register(self.data_r, select.POLLIN)
        if watch_stdin:
            poller.register(0, 0)  # POLLHUP and POLLERR only
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        pending = b""
        try:
            while True:
                for fd, events in poller.poll():
                    if fd == self.data_r and not self._take_data():
                        poller.unregister(self.data_r)
                    elif fd == self.status_r:
                        data = os.read(self.status_r, CHUNK)
                        # The run's code can write here too: anything but an exit code line is
                        # ignored (one that writes an exit code ends its own run early, no more).
                        *lines, pending = (pending + data).split(b"\n")
                        pending = pending[-16:]
                        for line in lines:
                            if line.isdigit() and int(line) <= 255:
                                return "reported", int(line)
                        if not data:
                            poller.unregister(self.status_r)
                            if pidfd is None:
                                return "exited", None
                    elif fd == pidfd:
                        return "exited", None
                    elif fd == 0 and events & (select.POLLHUP | select.POLLERR):
                        return "worker gone", None
        finally:
            os.close(self.status_r)
            if pidfd is not None:
                os.close(pidfd)

    def take_rest(self) -> bytes | None:
        """Once every process of the run is gone: the rest of the data pipe, and the whole (None
        when it was over the limit)."""
        with contextlib.suppress(OSError):
            while self._take_data():
                pass
        os.close(self.data_r)
        return None if self.data_over else bytes(self.data)


def fork_child(*, warm: bool) -> Child:
    """Forks the next run's process before its request comes, so a run does not wait for the fork
    (a copy of a process with torch loaded takes milliseconds) nor for its streams to be set up,
    and so the process never holds what the supervisor reads afterwards."""
    request_r, request_w = os.pipe()
    status_r, status_w = os.pipe()
    data_r, data_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 70
        with contextlib.suppress(BaseException):
            # Out of the way of the moves below first, then into place.
            request_r, status_w, data_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (request_r, status_w, data_w))
            os.dup2(request_r, REQUEST_FD, inheritable=False)
            os.dup2(status_w, STATUS_FD, inheritable=False)
            os.dup2(data_w, DATA_FD, inheritable=False)
            code = child(warm=warm) & 0xFF
            os.write(STATUS_FD, f"{code}\n".encode())
        os._exit(code)
    os.close(request_r)
    os.close(status_w)
    os.close(data_w)
    return Child(pid, request_w, status_r, data_r)


def child(*, warm: bool) -> int:
    """The process of one run, forked ahead: back to a fresh interpreter's state, its streams set
    up, then it waits for the request and runs it."""
    for sig, handler in STARTING_HANDLERS.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    os.closerange(DATA_FD + 1, 1 << 16)
    set_dumpable(1)
    streams = Streams()
    if warm:
        # While it waits: the pages a typical run touches are copied now (a fork shares them until
        # written, and merely using an object writes its reference count), not while the run runs.
        warm_up()
    chunks = []
    while chunk := os.read(REQUEST_FD, CHUNK):
        chunks.append(chunk)
    os.close(REQUEST_FD)
    if not chunks:
        return 0  # the sandbox is closing
    request = json.loads(b"".join(chunks).decode("utf-8"))
    # A fork copies the server's random state: every run would draw the same numbers. Seeded only
    # now, when the run starts, from the kernel's entropy.
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()
    return run_program(request, streams, DATA_FD)


def stop_run(*, spare: int = 0) -> None:
    """Kills every process in the sandbox but this one (init) and `spare`, and waits until each of
    their tasks is gone or in exit, where it runs nothing of its own: from then on nothing of the
    run can write a byte, though the processes may still be releasing their memory (kill_all waits
    for that)."""
    kill_others_until(task_dying, spare=spare)


def task_dying(pid: str) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True  # gone
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone
        if fields[0] not in ("Z", "X") and not int(fields[6]) & PF_EXITING:
            return False
    return True


def refuse(message: str, *, warm: bool) -> int:
    if warm:
        control({"type": "refused", "message": message})
    else:
        os.write(2, f"harness: {message}\n".encode())
    return 2


def supervise(*, warm: bool) -> int:
    """Serves requests from stdin: one (cold), or one after another until stdin closes (warm).
    Cold, the exit code is the learner's program's."""
    if os.getpid() != 1:
        return refuse("the supervisor must be the sandbox's PID 1", warm=warm)
    for sig in CATCHABLE:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    set_dumpable(0)
    os.environ["MPLBACKEND"] = "Agg"
    shot, first, export = None, None, False
    if not warm:
        # Cold, the request is read before anything is forked: a run with a check gets torch
        # imported here, once, for its program and its check (which reads tensors with it), as a
        # warm server has it; a run without one starts at once. Either way the program's wall
        # counts from its start (its ready line), not from the sandbox's.
        try:
            first = read_frame(0)
            export = bool(json.loads(first).get("export")) if first else False
        except (ValueError, AttributeError):
            return refuse("the request is not a JSON object", warm=warm)
    if warm or export:
        for name in PRELOAD:
            try:
                __import__(name)
            except ImportError:
                if warm:
                    raise
                # Cold, a runtime without it still runs programs that do not need it.
        if all(name in sys.modules for name in PRELOAD):
            warm_up()
        if cuda_initialised():
            return refuse("CUDA was initialised while importing", warm=warm)
    if warm:
        gc.collect()
        # Objects made so far stay out of the collector's way, so children do not copy their pages.
        gc.freeze()
        for folder in WRITABLE[:2]:  # caches the imports wrote (matplotlib's font list)
            for name in os.listdir(folder) if os.path.isdir(folder) else ():
                remove(os.path.join(folder, name))
        shot = snapshot()
    announced = False
    while True:
        kill_all()  # the last run's processes are gone and their memory released
        if warm and (cuda_initialised() or len(os.listdir("/proc/self/task")) != 1):
            return refuse("the server is not in a state to fork", warm=warm)
        child = fork_child(warm=warm)
        check = fork_checker()
        if warm and not announced:
            control({"type": "idle"})
            announced = True
        try:
            line, first = (first, None) if first is not None else (read_frame(0), None)
            if not line:
                kill_all()
                return 0  # the worker handed the sandbox back
            request = json.loads(line)
            modules, limits = request.get("modules"), request.get("limits") or {}
        except (ValueError, AttributeError):
            return refuse("the request is not a JSON object", warm=warm)
        ooms = oom_kills()
        run_started = time.monotonic()
        child.send(line)
        del line, request
        how, exit_code = child.wait(watch_stdin=warm)
        if how == "worker gone":
            kill_all()
            return 0
        run_ms = (time.monotonic() - run_started) * 1000
        if how == "exited":
            exit_code = os.waitstatus_to_exitcode(os.waitpid(child.pid, 0)[1])
        stop_run(spare=check.pid)
        data = child.take_rest()
        oom = oom_kills() > ooms
        if not check.untouched():
            check.discard()
            stop_run()
            check = fork_checker()
        check.hand((data or b"") if exit_code == 0 else None, modules, limits, exit_code=exit_code, oom=oom)
        del data
        check.wait_done()
        stop_run()
        clean = wipe(shot) if warm else True
        if warm:
            control(
                {
                    "type": "exited",
                    "exit_code": exit_code,
                    "oom": oom,
                    "tainted": not clean,
                    "run_ms": round(run_ms, 1),
                }
            )
        if not warm:
            kill_all()
            return exit_code if exit_code >= 0 else 128 - exit_code
        if not clean:
            return 3


if __name__ == "__main__":
    os._exit(supervise(warm=sys.argv[1:] == ["--serve"]))

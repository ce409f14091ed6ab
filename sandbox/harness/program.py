"""The run's own process: its limits, streams and the course's modules, then the learner's code
as __main__, and what it hands the check."""

from __future__ import annotations

import contextlib
import importlib.abc
import io
import linecache
import os
import resource
import sys

from .data import encode_namespace
from .output import FILENAME, Channel, Figures, Pump, PyplotHook, drain, error_event, patch_show


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


class CourseModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
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

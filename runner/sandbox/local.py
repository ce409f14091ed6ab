"""The `local` backend: bubblewrap, for machines without a Docker engine.

Each run gets its own user, PID, network (a loopback that is down), IPC, UTS and cgroup
namespaces, a root made only of read-only binds (the system's /usr and libraries, the Python
installation and the sandbox runtime venv at /opt/runtime, the harness at /opt/harness), a private
size-capped /tmp, a fresh /proc and /dev, uid 65534 inside, no capabilities, a clean environment
and rlimits. The project's folder, /root, /home and /etc are not there.

Process count: the harness sets RLIMIT_NPROC inside the sandbox's user namespace, where the
kernel counts processes per namespace and uid, so one run's processes never count against
another's, nor against the worker's user on a laptop. But bubblewrap maps the sandbox's uid to the
uid that started it, and the kernel exempts host root from RLIMIT_NPROC. A worker running as root
(containers, CI) therefore also puts each sandbox in its own pids cgroup capped at the limit. (It
cannot drop to an unprivileged host uid instead: bubblewrap must then reach the Python installation
as that uid, and a Python under /root cannot be reached.)
Memory: RLIMIT_AS (there is no cgroup to ask for here); an allocation past it raises in the
program, which the worker reports as the memory limit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from itertools import count
from pathlib import Path

from .base import EventSink, Limits, RunRequest, RunResult, cold_slot, setting
from .pool import PoolHolder, WarmSandbox
from .protocol import STDERR_TAIL, request_payload, run_result, supervise

logger = logging.getLogger(__name__)
HARNESS = Path(__file__).with_name("harness.py")
RUNTIME_DEST = "/opt/runtime"
HARNESS_DEST = "/opt/harness/harness.py"
SANDBOX_UID = 65534
CGROUP_ROOT = Path("/sys/fs/cgroup")
# System paths a dynamically linked Python needs; missing ones are skipped.
# /etc/fonts: fontconfig reads it when matplotlib looks for fonts (no secrets live there).
SYSTEM_RO = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/alternatives", "/etc/fonts")
SANDBOX_TMP = "/tmp"  # noqa: S108 - the sandbox's own private tmpfs
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": SANDBOX_TMP,
    "LANG": "C.UTF-8",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": SANDBOX_TMP,
    "OMP_NUM_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",
}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def runtime_default() -> Path:
    """The venv the sandbox runs: RUNNER_LOCAL_RUNTIME, else the worker's own venv."""
    return Path(setting("RUNNER_LOCAL_RUNTIME", "") or os.environ.get("RUNNER_LOCAL_RUNTIME") or sys.prefix)


class LocalBackend:
    name = "local"

    def __init__(self, *, runtime: Path | None = None, bwrap: str | None = None):
        self.runtime = Path(runtime or runtime_default())
        self.bwrap = bwrap or bwrap_path() or "bwrap"
        self._cpu = count()
        # The sandboxes this worker process runs now, so stop(run_id) can end one early.
        self._running: dict[str, subprocess.Popen] = {}
        self.warm = PoolHolder(name=self.name, start=self._warm_start)

    @classmethod
    def problems(cls) -> list[str]:
        """What this machine lacks for the local sandbox (runner/sandbox/__init__.py)."""
        if not bwrap_path():
            return ["bubblewrap (bwrap) is not installed: learners' code cannot run (apt-get install bubblewrap)"]
        return []

    # -- the interface ------------------------------------------------------------------------
    def execute(self, request: RunRequest, on_event: EventSink) -> RunResult:
        pool = self.warm.get() if request.owner else None
        if pool is None:
            return self.execute_cold(request, on_event)
        return pool.execute(request, on_event, cold=lambda: self.execute_cold(request, on_event))

    @cold_slot()
    def execute_cold(self, request: RunRequest, on_event: EventSink) -> RunResult:
        """A fresh sandbox for this one run."""
        limits = request.limits
        try:
            argv = self._argv(limits)
        except OSError as e:
            return RunResult(status="error", reason=f"the local sandbox is not set up: {e}")
        started = time.monotonic()
        cpu = self._pick_cpu()
        group = PidsCgroup.create(request.run_id, limits.pids) if os.geteuid() == 0 else None
        seccomp = _seccomp_fd()
        if seccomp is not None:
            argv[1:1] = ["--seccomp", str(seccomp)]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
                pass_fds=[seccomp] if seccomp is not None else [],
                preexec_fn=lambda: _child_limits(limits, cpu, group, cpu_s=int(limits.wall_s) + 5),
                env=ENV,
                close_fds=True,
            )
        except OSError as e:
            if group:
                group.remove()
            return RunResult(status="error", reason=f"the local sandbox could not start: {e}")
        finally:
            if seccomp is not None:
                os.close(seccomp)

        self._running[request.run_id] = proc
        stderr_chunks: list[bytes] = []
        stderr_thread = threading.Thread(target=_read_capped, args=(proc.stderr, stderr_chunks), daemon=True)
        stderr_thread.start()
        try:
            payload = request_payload(request, address_space=True, processes=True)
            threading.Thread(target=_feed_stdin, args=(proc, payload), daemon=True).start()

            def kill() -> None:
                _kill(proc)

            collector, timed_out = supervise(
                read=lambda: proc.stdout.read1(65536),
                kill=kill,
                limits=limits,
                on_event=on_event,
                started=started,
            )
            try:
                exit_code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill()
                exit_code = proc.wait()
        finally:
            # Whatever happened above, nothing of the run survives it.
            self._running.pop(request.run_id, None)
            _kill(proc)
            proc.wait()
            stderr_thread.join(timeout=1)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                stream.close()
            if group:
                group.remove()
        return run_result(
            collector=collector,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=False,
            limits=limits,
            started=started,
            stderr_tail=b"".join(stderr_chunks).decode("utf-8", "replace"),
            details={"backend": self.name, "warm": False},
        )

    def stop(self, run_id: str) -> None:
        """Ends a run of this worker process now (the learner pressed Stop). A run of a dead
        worker needs nothing: its sandbox died with it (--die-with-parent)."""
        proc = self._running.get(run_id)
        if proc is not None:
            _kill(proc)
        pool = self.warm.current()
        if pool is not None:
            pool.stop(run_id)

    def cleanup_strays(self) -> int:
        # bubblewrap sandboxes die with the worker (--die-with-parent, PID namespace): no strays.
        return 0

    def _warm_start(self, shape: tuple) -> LocalWarmSandbox:
        limits, _gpu = shape
        return LocalWarmSandbox(backend=self, limits=limits)

    # -- building the sandbox -----------------------------------------------------------------
    def _argv(self, limits: Limits, *, serve: bool = False) -> list[str]:
        python = self.runtime / "bin" / "python"
        if not python.exists():
            raise OSError(f"no Python at {python}")
        base = Path(os.path.realpath(python)).parents[1]

        argv = [
            self.bwrap,
            # A warm sandbox's server is the namespace's init, which nothing inside can kill.
            *(["--as-pid-1"] if serve else []),
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        for key, value in ENV.items():
            argv += ["--setenv", key, value]
        for path in SYSTEM_RO:
            if os.path.lexists(path):
                argv += ["--symlink", os.readlink(path), path] if os.path.islink(path) else ["--ro-bind", path, path]
        if not str(base).startswith(("/usr/", "/lib")):
            # The venv's python links to its base installation by absolute path.
            argv += ["--ro-bind", str(base), str(base)]
        argv += ["--ro-bind", str(self.runtime), RUNTIME_DEST, "--ro-bind", str(HARNESS), HARNESS_DEST]
        argv += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "1777",
            "--size",
            str(limits.tmp_bytes),
            "--tmpfs",
            SANDBOX_TMP,
            "--chdir",
            SANDBOX_TMP,
            "--remount-ro",
            "/",
            "--",
            f"{RUNTIME_DEST}/bin/python",
            "-I",
            "-B",
            HARNESS_DEST,
            *(["--serve"] if serve else []),
        ]
        return argv

    def _pick_cpu(self) -> int:
        cpus = sorted(os.sched_getaffinity(0))
        return cpus[next(self._cpu) % len(cpus)]


class PidsCgroup:
    """A pids cgroup of its own for one sandbox (cgroup v1 or v2), for a worker running as root."""

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def create(cls, run_id: str, pids: int) -> PidsCgroup | None:
        v2 = (CGROUP_ROOT / "cgroup.controllers").exists()
        parent = CGROUP_ROOT / "easycompilers" if v2 else CGROUP_ROOT / "pids" / "easycompilers"
        name = "".join(c for c in run_id if c.isalnum() or c in "-_")[:64] or "run"
        path = parent / f"{name}-{os.getpid()}-{next(_serial)}"
        try:
            parent.mkdir(exist_ok=True)
            if v2:
                (parent / "cgroup.subtree_control").write_text("+pids")
            path.mkdir()
            (path / "pids.max").write_text(str(pids))
        except OSError:
            logger.warning("no writable pids cgroup under %s: the process limit is not enforced", CGROUP_ROOT)
            return None
        return cls(path)

    def enter(self) -> None:
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
        logger.warning("could not remove cgroup %s", self.path)


_serial = count()


# System calls a learner's program never needs and that reach across processes or into the
# kernel's riskier corners: they fail with EPERM (x86_64 and aarch64 numbers).
DENIED_SYSCALLS = {
    "x86_64": (
        0xC000003E,
        {
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "perf_event_open": 298,
            "bpf": 321,
            "userfaultfd": 323,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kcmp": 272,
            "perf_event_open": 241,
            "bpf": 280,
            "userfaultfd": 282,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
        },
    ),
}


def seccomp_program() -> bytes | None:
    """A classic BPF seccomp filter for bubblewrap's --seccomp: the denied calls (and x32 ones)
    fail with EPERM, any other architecture is killed, everything else is allowed."""
    arch = DENIED_SYSCALLS.get(os.uname().machine)
    if arch is None:
        return None
    audit_arch, calls = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, deny, kill = 0x7FFF0000, 0x00050000 | 1, 0x80000000  # ALLOW, ERRNO(EPERM), KILL_PROCESS
    numbers = sorted(calls.values())
    n = len(numbers)
    prog = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, audit_arch),
        (ret, 0, 0, kill),
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, n + 1, 0, 0x40000000),  # x32 system calls
    ]
    for i, nr in enumerate(numbers):
        prog.append((jeq, n - i, 0, nr))
    prog += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    return b"".join(struct.pack("HBBI", *insn) for insn in prog)


def _child_limits(limits: Limits, cpu: int, group: PidsCgroup | None, *, cpu_s: int | None) -> None:
    """Runs in the forked child before bubblewrap starts. `cpu_s` None: a warm sandbox, whose
    harness caps each run's CPU seconds itself (the sandbox outlives its runs)."""
    if group:
        group.enter()
    os.sched_setaffinity(0, {cpu})
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CPU, cpu_s if cpu_s is not None else resource.RLIM_INFINITY),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))


def _seccomp_fd() -> int | None:
    program = seccomp_program()
    if program is None:
        return None
    fd = os.memfd_create("seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _feed_stdin(proc: subprocess.Popen, data: bytes) -> None:
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        # The sandbox died before reading its program; the result says so.
        pass


def _read_capped(stream, chunks: list[bytes]) -> None:
    size = 0
    while True:
        data = stream.read1(65536)
        if not data:
            return
        if size < STDERR_TAIL * 4:
            chunks.append(data)
            size += len(data)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class LocalWarmSandbox(WarmSandbox):
    """A bubblewrap sandbox whose harness serves runs (pool.py): the cold sandbox's namespaces,
    mounts, seccomp filter, pids cgroup and rlimits, with the harness as the PID namespace's init."""

    backend_name = "local"

    def __init__(self, *, backend: LocalBackend, limits: Limits):
        super().__init__(shape=(limits, False))
        argv = backend._argv(limits, serve=True)
        cpu = backend._pick_cpu()
        self.group = PidsCgroup.create(f"warm-{self.id}", limits.pids) if os.geteuid() == 0 else None
        seccomp = _seccomp_fd()
        if seccomp is not None:
            argv[1:1] = ["--seccomp", str(seccomp)]
        self._lock = threading.Lock()
        group = self.group
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
                pass_fds=[seccomp] if seccomp is not None else [],
                preexec_fn=lambda: _child_limits(limits, cpu, group, cpu_s=None),
                env=ENV,
                close_fds=True,
            )
        except OSError:
            if self.group:
                self.group.remove()
            raise
        finally:
            if seccomp is not None:
                os.close(seccomp)
        threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True).start()

    def _pump(self, stream, is_stdout: bool) -> None:
        while True:
            try:
                data = stream.read1(65536)
            except (OSError, ValueError):
                data = b""
            if not data:
                if is_stdout:
                    self._on_eof()
                return
            (self._on_stdout if is_stdout else self._on_stderr)(data)

    def _send(self, data: bytes) -> None:
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _kill(self) -> None:
        _kill(self.proc)

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def _close(self) -> None:
        _kill(self.proc)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        if self.group:
            self.group.remove()
            self.group = None

    def memory_kib(self) -> int:
        """Proportional set size of the sandbox's processes (idle: bubblewrap and the server)."""
        total, pids = 0, [self.proc.pid]
        while pids:
            pid = pids.pop()
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
            with contextlib.suppress(OSError):
                for task in Path(f"/proc/{pid}/task").iterdir():
                    pids += [int(c) for c in (task / "children").read_text().split()]
        return total

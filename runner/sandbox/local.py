"""The `local` backend: bubblewrap, for machines without a Docker engine.

Each sandbox gets its own user, PID, network (a loopback that is down), IPC, UTS and cgroup
namespaces, a root made only of read-only binds (the system's /usr and libraries, the Python
installation and the sandbox runtime venv at /opt/runtime, the harness at /opt/harness), uid 65534
inside, no capabilities, a clean environment, the project's one seccomp policy (seccomp.py) and
rlimits. The project's folder, /root, /home and /etc are not there.

What it runs as on the host, and what it may write:
- never a privileged host user: a worker running as root drops to RUNNER_LOCAL_UID (an unused uid
  that owns nothing) before starting bubblewrap, and reaches the read-only binds through file
  descriptors it opened as root (so a Python under /root is reachable though that uid could not
  walk there). The host's device nodes bound into /dev are not that uid's, so it cannot change
  them, and /dev itself is read-only.
- every writable mount has a size and an inode cap: /tmp and /dev/shm are tmpfs mounts made
  for the sandbox alone (the sandbox's launcher mounts them in a user and mount namespace of its
  own, which bubblewrap's --tmpfs cannot do: it takes no inode cap); /dev/mqueue is the IPC
  namespace's own.
- memory (all processes and tmpfs pages together, no swap), CPU (a quota of one CPU) and processes
  are limits of a cgroup made for the sandbox (cgroup v1 or v2), which needs a worker running as
  root; elsewhere `problems()` says which limits are per process only, and the worker says so at
  start.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from itertools import count
from pathlib import Path

from . import seccomp
from .base import EventSink, Limits, RunRequest, RunResult, cold_slot, setting
from .pool import PoolHolder, WarmSandbox
from .protocol import STDERR_TAIL, EndLine, request_payload, run_result, supervise

logger = logging.getLogger(__name__)
HARNESS = Path(__file__).with_name("harness.py")
RUNTIME_DEST = "/opt/runtime"
HARNESS_DEST = "/opt/harness/harness.py"
SANDBOX_UID = 65534
# The host uid a root worker's sandboxes run as: one that no account and no file has.
HOST_UID_DEFAULT = 63999
CGROUP_ROOT = Path("/sys/fs/cgroup")
# Mount points in the stage folder (stage_dir): the two tmpfs, the Python installation, the runtime.
STAGE_FOLDERS = ("tmp", "shm", "python", "runtime")
STAGE_HARNESS = "harness.py"
CGROUP_PARENT = "easycompilers"
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

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x1000, 0x4000, 0x40000
TMPFS_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def runtime_default() -> Path:
    """The venv the sandbox runs: RUNNER_LOCAL_RUNTIME, else the worker's own venv."""
    return Path(setting("RUNNER_LOCAL_RUNTIME", "") or os.environ.get("RUNNER_LOCAL_RUNTIME") or sys.prefix)


def host_uid() -> int | None:
    """The uid sandboxes run as on the host when the worker is root (None: the worker's own)."""
    if os.geteuid() != 0:
        return None
    uid = int(setting("RUNNER_LOCAL_UID", HOST_UID_DEFAULT))
    if uid == 0:
        # Refuse rather than run learners' code as root.
        raise OSError("RUNNER_LOCAL_UID must name an unprivileged uid, not 0")
    return uid


def stage_dir() -> Path:
    """Empty folders the launcher mounts each sandbox's tmpfs on, inside a mount namespace of the
    sandbox's own (so nothing is mounted on the host). Owned by the worker's user."""
    path = Path(tempfile.gettempdir()) / f"easycompilers-sandbox-{os.geteuid()}"
    for name in ("", *STAGE_FOLDERS, STAGE_HARNESS):
        entry = path / name
        with contextlib.suppress(FileExistsError):
            if name == STAGE_HARNESS:
                entry.touch(mode=0o644, exist_ok=False)
            else:
                entry.mkdir(mode=0o755)
        st = entry.lstat()
        if entry.is_symlink() or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise OSError(f"{entry} is not this user's alone")
    return path


@dataclass(frozen=True)
class Launch:
    """What the launcher does between fork and exec of bubblewrap (see `_launch`)."""

    limits: Limits
    cgroup: RunCgroup | None
    uid: int | None
    stage: Path
    cpu_s: int | None
    # (host path, name of its mount point in the stage folder)
    binds: tuple[tuple[str, str], ...] = ()


class LocalBackend:
    name = "local"

    def __init__(self, *, runtime: Path | None = None, bwrap: str | None = None):
        self.runtime = Path(runtime or runtime_default())
        self.bwrap = bwrap or bwrap_path() or "bwrap"
        # The sandboxes this worker process runs now, so stop(run_id) can end one early.
        self._running: dict[str, subprocess.Popen] = {}
        self.warm = PoolHolder(name=self.name, start=self._warm_start)

    @classmethod
    def problems(cls) -> list[str]:
        """What this machine lacks for the local sandbox (runner/sandbox/__init__.py): empty when
        every limit is enforced."""
        if not bwrap_path():
            return ["bubblewrap (bwrap) is not installed: learners' code cannot run (apt-get install bubblewrap)"]
        return list(_probe(bwrap_path(), str(runtime_default())))

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
        started = time.monotonic()
        try:
            proc, group = self._start(limits, f"run-{request.run_id}", cpu_s=int(limits.wall_s) + 5)
        except (OSError, subprocess.SubprocessError) as e:
            # The launcher's own error does not cross the fork; the probe says what is missing.
            why = "; ".join(LocalBackend.problems()) if isinstance(e, subprocess.SubprocessError) else str(e)
            return RunResult(status="error", reason=f"the local sandbox is not set up: {why or e}")
        ooms = group.oom_kills() if group else 0
        self._running[request.run_id] = proc
        stderr_chunks: list[bytes] = []
        stderr_thread = threading.Thread(target=_read_capped, args=(proc.stderr, stderr_chunks), daemon=True)
        stderr_thread.start()
        end = EndLine()
        try:
            payload = request_payload(request, address_space=True, processes=True, nonce=end.nonce)
            threading.Thread(target=_feed_stdin, args=(proc, payload), daemon=True).start()

            def kill() -> None:
                _kill(proc)

            collector, timed_out = supervise(
                read=end.reader(lambda: proc.stdout.read1(65536)),
                kill=kill,
                limits=limits,
                on_event=on_event,
                started=started,
                end=end,
            )
            if end.exit_code is not None:
                # The end line says how the program ended: the sandbox has nothing more to do.
                exit_code = end.exit_code
            else:
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
            oom = end.oom or bool(group and group.oom_kills() > ooms)
            if group:
                group.remove()
        return run_result(
            collector=collector,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom,
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
    def binds(self) -> tuple[tuple[str, str], ...]:
        python = self.runtime / "bin" / "python"
        base = Path(os.path.realpath(python)).parents[1]
        return ((str(base), "python"), (str(self.runtime), "runtime"), (str(HARNESS), STAGE_HARNESS))

    def _start(
        self, limits: Limits, name: str, *, cpu_s: int | None, serve: bool = False
    ) -> tuple[subprocess.Popen, RunCgroup | None]:
        """Starts one sandbox: bubblewrap with the harness as PID 1, in a cgroup of its own."""
        fds: list[int] = []
        group = RunCgroup.create(name, limits) if os.geteuid() == 0 else None
        try:
            argv = self._argv(limits, fds, serve=serve)
            launch = Launch(
                limits=limits, cgroup=group, uid=host_uid(), stage=stage_dir(), cpu_s=cpu_s, binds=self.binds()
            )
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
                pass_fds=fds,
                preexec_fn=lambda: _launch(launch),
                env=ENV,
                close_fds=True,
            )
        except BaseException:
            if group:
                group.remove()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        return proc, group

    def _argv(
        self, limits: Limits, fds: list[int], *, serve: bool = False, command: list[str] | None = None
    ) -> list[str]:
        """bubblewrap's arguments; `fds` gets the descriptors they name (the caller passes them on
        and closes them). The launcher must bind `self.binds()` into the stage folder first."""
        python = self.runtime / "bin" / "python"
        if not python.exists():
            raise OSError(f"no Python at {python}")
        base = Path(os.path.realpath(python)).parents[1]

        program = seccomp.bpf_program()
        if program is None:
            raise OSError(f"no seccomp policy for {os.uname().machine}")
        seccomp_fd = os.memfd_create("seccomp", os.MFD_CLOEXEC)
        fds.append(seccomp_fd)
        os.write(seccomp_fd, program)
        os.lseek(seccomp_fd, 0, os.SEEK_SET)

        stage = stage_dir()
        argv = [
            self.bwrap,
            "--seccomp",
            str(seccomp_fd),
            # The harness is the PID namespace's init, which nothing inside can signal.
            "--as-pid-1",
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
        # The launcher binds these into the stage folder first (`binds`): bubblewrap runs as an
        # unprivileged uid that may not be able to walk to them (a Python installed under /root).
        if not str(base).startswith(("/usr/", "/lib")):
            # The venv's python links to its base installation by absolute path.
            argv += ["--ro-bind", str(stage / "python"), str(base)]
        argv += ["--ro-bind", str(stage / "runtime"), RUNTIME_DEST]
        argv += ["--ro-bind", str(stage / STAGE_HARNESS), HARNESS_DEST]
        argv += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            # The two tmpfs mounts the launcher made, with their size and inode caps.
            "--bind",
            str(stage / "shm"),
            "/dev/shm",  # noqa: S108 - the sandbox's own
            "--mqueue",
            "/dev/mqueue",
            "--remount-ro",
            "/dev",
            "--bind",
            str(stage / "tmp"),
            SANDBOX_TMP,
            "--chdir",
            SANDBOX_TMP,
            "--remount-ro",
            "/",
            "--",
            *(command or [f"{RUNTIME_DEST}/bin/python", "-I", "-B", HARNESS_DEST, *(["--serve"] if serve else [])]),
        ]
        return argv


def _launch(launch: Launch) -> None:
    """Runs in the forked child, before bubblewrap starts: joins the sandbox's cgroup, sets the
    rlimits, and in a mount namespace of its own mounts the sandbox's tmpfs (with their inode caps)
    and binds the Python installation, the runtime and the harness where bubblewrap can reach them;
    then a root worker's child drops to its unprivileged uid. (A worker that is not root does the
    same in a user namespace of its own, which bubblewrap then nests in.)"""
    limits = launch.limits
    if launch.cgroup:
        launch.cgroup.enter()
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CPU, launch.cpu_s if launch.cpu_s is not None else resource.RLIM_INFINITY),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))
    if launch.uid is not None:
        _check(_libc.unshare(CLONE_NEWNS), "unshare")
        owner = f",uid={launch.uid},gid={launch.uid}"
    else:
        uid, gid = os.getuid(), os.getgid()
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        owner = ""
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for folder, size, inodes in (
        ("tmp", limits.tmp_bytes, limits.tmp_inodes),
        ("shm", limits.shm_bytes, limits.shm_inodes),
    ):
        options = f"size={size},nr_inodes={inodes},mode=1777{owner}".encode()
        target = str(launch.stage / folder).encode()
        _check(_libc.mount(b"tmpfs", target, b"tmpfs", TMPFS_FLAGS, options), f"mount tmpfs {folder}")
    for source, name in launch.binds:
        target = str(launch.stage / name).encode()
        _check(_libc.mount(source.encode(), target, None, MS_BIND | MS_REC, None), f"bind {source}")
    if launch.uid is not None:
        os.setgroups([])
        os.setresgid(launch.uid, launch.uid, launch.uid)
        os.setresuid(launch.uid, launch.uid, launch.uid)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


@cache
def _probe(bwrap: str, runtime: str) -> tuple[str, ...]:
    """Starts one sandbox that does nothing, the way runs start; says what failed or is missing."""
    problems = []
    if os.geteuid() != 0:
        problems.append(
            "the worker does not run as root, so it cannot give each sandbox a cgroup: memory (2 GiB), "
            "CPU (1 CPU) and process (64) limits hold per process, not per run"
        )
    elif RunCgroup.unavailable():
        problems.append(f"no writable cgroup hierarchy under {CGROUP_ROOT}: {RunCgroup.unavailable()}")
    backend = LocalBackend(runtime=Path(runtime), bwrap=bwrap)
    fds: list[int] = []
    try:
        argv = backend._argv(Limits(), fds, command=["/bin/true"])
        launch = Launch(limits=Limits(), cgroup=None, uid=host_uid(), stage=stage_dir(), cpu_s=5, binds=backend.binds())
        done = subprocess.run(
            argv, pass_fds=fds, preexec_fn=lambda: _launch(launch), capture_output=True, timeout=30, check=False
        )
        if done.returncode != 0:
            problems.append(f"the local sandbox cannot start: {done.stderr.decode(errors='replace').strip()}")
    except (OSError, subprocess.SubprocessError) as e:
        problems.append(
            f"the local sandbox cannot start ({e}): it needs unprivileged user namespaces "
            "(sysctl user.max_user_namespaces > 0) and bubblewrap >= 0.8"
        )
    finally:
        for fd in fds:
            os.close(fd)
    return tuple(problems)


class RunCgroup:
    """A cgroup of its own for one sandbox (v1: a folder per controller; v2: one folder), with the
    run's limits: memory and swap (tmpfs pages count as memory), a CPU quota, and processes."""

    CONTROLLERS = ("memory", "cpu", "pids")

    def __init__(self, paths: list[Path], v2: bool):
        self.paths = paths
        self.v2 = v2

    @staticmethod
    def v2_root() -> bool:
        return (CGROUP_ROOT / "cgroup.controllers").exists()

    @classmethod
    def parents(cls) -> dict[str, Path]:
        """Where each controller's sandboxes go: v2, one parent; v1, the controller's mount."""
        if cls.v2_root():
            return dict.fromkeys(cls.CONTROLLERS, CGROUP_ROOT / CGROUP_PARENT)
        mounts = {}
        with open("/proc/self/mounts") as f:
            for line in f:
                _dev, where, kind, options, *_ = line.split()
                if kind == "cgroup":
                    for controller in cls.CONTROLLERS:
                        if controller in options.split(","):
                            mounts[controller] = Path(where) / CGROUP_PARENT
        return mounts

    @classmethod
    def unavailable(cls) -> str:
        """Empty when sandbox cgroups can be made here, else why not."""
        parents = cls.parents()
        missing = [c for c in cls.CONTROLLERS if c not in parents]
        if missing:
            return f"no cgroup controller {', '.join(missing)}"
        try:
            group = cls.create(f"probe-{os.getpid()}", Limits())
        except OSError as e:
            return str(e)
        group.remove()
        return ""

    @classmethod
    def create(cls, name: str, limits: Limits) -> RunCgroup:
        name = "".join(c for c in name if c.isalnum() or c in "-_")[:64] or "run"
        name = f"{name}-{os.getpid()}-{next(_serial)}"
        v2 = cls.v2_root()
        parents = cls.parents()
        if v2:
            parent = parents["memory"]
            parent.mkdir(exist_ok=True)
            (parent / "cgroup.subtree_control").write_text("+memory +cpu +pids")
            paths = [parent / name]
        else:
            paths = [parents[c] / name for c in cls.CONTROLLERS]
        group = cls(paths, v2)
        try:
            for path in paths:
                path.parent.mkdir(exist_ok=True)
                path.mkdir()
            quota = int(limits.cpus * 100_000)
            if v2:
                (paths[0] / "memory.max").write_text(str(limits.memory_bytes))
                (paths[0] / "memory.swap.max").write_text("0")
                (paths[0] / "cpu.max").write_text(f"{quota} 100000")
                (paths[0] / "pids.max").write_text(str(limits.pids))
            else:
                memory, cpu, pids = paths
                (memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                if (memory / "memory.memsw.limit_in_bytes").exists():
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_bytes))
                (memory / "memory.swappiness").write_text("0")
                (cpu / "cpu.cfs_period_us").write_text("100000")
                (cpu / "cpu.cfs_quota_us").write_text(str(quota))
                (pids / "pids.max").write_text(str(limits.pids))
        except OSError:
            group.remove()
            raise
        return group

    def enter(self) -> None:
        pid = str(os.getpid())
        for path in self.paths:
            (path / "cgroup.procs").write_text(pid)

    def oom_kills(self) -> int:
        name = "memory.events" if self.v2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError), open(self.paths[0] / name) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> None:
        for path in self.paths:
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            else:
                logger.warning("could not remove cgroup %s", path)


_serial = count()


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
    mounts, seccomp filter, cgroup and rlimits."""

    backend_name = "local"

    def __init__(self, *, backend: LocalBackend, limits: Limits):
        super().__init__(shape=(limits, False))
        self._lock = threading.Lock()
        self.proc, self.group = backend._start(limits, f"warm-{self.id}", cpu_s=None, serve=True)
        threading.Thread(target=self._pump, args=(self.proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, False), daemon=True).start()

    def oom_kills(self) -> int | None:
        # The server cannot see its cgroup (no /sys in the sandbox): the worker reads it.
        return self.group.oom_kills() if self.group else None

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

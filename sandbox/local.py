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

This module builds bubblewrap's command line and runs sandboxes; local_launcher.py holds what runs
between fork and exec (the stage folder, mounts, rlimits, the uid drop) and the process helpers,
local_cgroups.py the sandbox's cgroup.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import cache
from pathlib import Path

from . import seccomp
from .base import EventSink, Limits, PooledBackend, RunRequest, RunResult, cold_slot, setting
from .local_cgroups import CGROUP_ROOT, RunCgroup
from .local_launcher import (
    STAGE_HARNESS,
    Launch,
    feed_stdin,
    host_uid,
    kill_group,
    launch_child,
    pipes,
    read_capped,
    stage_dir,
)
from .pool import PoolHolder
from .protocol import EndLine, request_payload, run_result, supervise
from .warm_sandbox import WarmSandbox

HARNESS = Path(__file__).with_name("harness")
RUNTIME_DEST = "/opt/runtime"
HARNESS_DEST = "/opt/harness/harness"
SANDBOX_UID = 65534
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


class LocalBackend(PooledBackend):
    name = "local"

    def __init__(self, *, runtime: Path | None = None, bwrap: str | None = None):
        self.runtime = Path(runtime or runtime_default())
        self.bwrap = bwrap or bwrap_path() or "bwrap"
        # The sandboxes this worker process runs now, so stop(run_id) can end one early.
        self._running: dict[str, subprocess.Popen[bytes]] = {}
        self.warm = PoolHolder(name=self.name, start=self._warm_start)

    @classmethod
    def problems(cls) -> list[str]:
        """What this machine lacks for the local sandbox (sandbox/__init__.py): empty when
        every limit is enforced."""
        if not bwrap_path():
            return ["bubblewrap (bwrap) is not installed: learners' code cannot run (apt-get install bubblewrap)"]
        return list(_probe(bwrap_path(), str(runtime_default())))

    # -- the interface ------------------------------------------------------------------------
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
        stdin, stdout, stderr = pipes(proc)
        stderr_chunks: list[bytes] = []
        stderr_thread = threading.Thread(target=read_capped, args=(stderr, stderr_chunks), daemon=True)
        stderr_thread.start()
        end = EndLine()
        try:
            payload = request_payload(request, address_space=True, processes=True, nonce=end.nonce)
            threading.Thread(target=feed_stdin, args=(stdin, payload), daemon=True).start()

            def kill() -> None:
                kill_group(proc)

            collector, timed_out = supervise(
                read=end.reader(lambda: stdout.read1(65536)),
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
            kill_group(proc)
            proc.wait()
            stderr_thread.join(timeout=1)
            for stream in (stdin, stdout, stderr):
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
            kill_group(proc)
        self._warm_stop(run_id)

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
    ) -> tuple[subprocess.Popen[bytes], RunCgroup | None]:
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
                preexec_fn=lambda: launch_child(launch),
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
            argv, pass_fds=fds, preexec_fn=lambda: launch_child(launch), capture_output=True, timeout=30, check=False
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


class LocalWarmSandbox(WarmSandbox):
    """A bubblewrap sandbox whose harness serves runs (pool.py): the cold sandbox's namespaces,
    mounts, seccomp filter, cgroup and rlimits."""

    backend_name = "local"

    def __init__(self, *, backend: LocalBackend, limits: Limits):
        super().__init__(shape=(limits, False))
        self._lock = threading.Lock()
        self.proc, self.group = backend._start(limits, f"warm-{self.id}", cpu_s=None, serve=True)
        self.stdin, self.stdout, self.stderr = pipes(self.proc)
        threading.Thread(target=self._pump, args=(self.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.stderr, False), daemon=True).start()

    def oom_kills(self) -> int | None:
        # The server cannot see its cgroup (no /sys in the sandbox): the worker reads it.
        return self.group.oom_kills() if self.group else None

    def _pump(self, stream: io.BufferedReader, is_stdout: bool) -> None:
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
            self.stdin.write(data)
            self.stdin.flush()

    def _kill(self) -> None:
        kill_group(self.proc)

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def _close(self) -> None:
        kill_group(self.proc)
        self.proc.wait()
        for stream in (self.stdin, self.stdout, self.stderr):
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

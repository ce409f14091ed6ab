"""The sandbox's harness (sandbox/harness/) run on this machine without a container, cold
and warm, through the worker's own side of the protocol (request_payload, supervise, EndLine,
run_result, WarmSandbox): for scripts/gpu_device_check.py, on a GPU machine with no Docker, Django
or Celery. Standard library and the tree's sandbox modules only.

What the container gives the harness, the launcher gives it here: PID 1 of a PID namespace of its
own, with a /proc, /tmp, /dev/shm and SysV IPC namespace of its own (a warm server removes what a run
leaves there, so it must never see the host's), the host's /dev read-only, one device in
CUDA_VISIBLE_DEVICES (what the container toolkit's device request does) and the worker's memory
fraction in its environment. It is not a containment boundary: the backends' batteries test those.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "sandbox" / "harness"

# The harness's package run from its sources alone (`python -c`): the repository may be under the
# host's /tmp, which the sandbox hides, so the launcher cannot run the package's folder. The
# sources are read here and imported from memory there. Standard library only, as the harness.
BOOT = r"""
import importlib.machinery, sys
SOURCES = %r
class Sources:
    def find_spec(self, name, path=None, target=None):
        if name in SOURCES:
            return importlib.machinery.ModuleSpec(name, self, is_package=name == "harness")
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        exec(compile(SOURCES[module.__name__], f"<{module.__name__}>", "exec"), module.__dict__)
sys.meta_path.insert(0, Sources())
import harness.supervisor
harness.supervisor.main()
"""


def harness_source() -> str:
    sources = {}
    for path in sorted(HARNESS.glob("*.py")):
        if path.stem != "__main__":
            sources["harness" if path.stem == "__init__" else f"harness.{path.stem}"] = path.read_text()
    return BOOT % (sources,)


def _sandbox_modules():
    """The worker's side of the protocol: the sandbox package, which needs nothing of the platform."""
    sys.path.insert(0, str(ROOT))
    from sandbox import base, gpus, local_launcher, protocol, warm_sandbox

    return base, gpus, local_launcher, protocol, warm_sandbox


base, gpus, local_launcher, protocol, warm_sandbox = _sandbox_modules()
# The local backend's process helpers: the same kill of the sandbox's process group, the same
# capped stderr reader and stdin feed.
kill = local_launcher.kill_group


# --- the sandbox without a container -------------------------------------------------------------

# Runs as `python -c LAUNCHER HARNESS_SOURCE [--serve]`: new PID, mount and IPC namespaces (and a
# user namespace when not root), then a fork, whose child is PID 1 there: its own /proc, /tmp and
# /dev/shm (and /dev/mqueue), the host's /dev read-only. A venv under the host's /tmp (a clone
# there) is bound read-only at a folder outside /tmp (EC_STAGE), since a warm server empties /tmp
# at its start. Then the harness, from its source (its file may be under the hidden /tmp too).
# Standard library only, as the harness.
LAUNCHER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWUSER = 0x20000, 0x8000000, 0x20000000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000

def fail(what):
    os.write(2, f"gpu_device_check launcher: {what}: {os.strerror(ctypes.get_errno())}\n".encode())
    os._exit(120)

def mount(source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        fail(f"mount {target}")

source, args = sys.argv[1], sys.argv[2:]
tmp_bytes, venv, stage = os.environ.pop("EC_TMP_BYTES"), os.environ.pop("EC_VENV"), os.environ.pop("EC_STAGE")
uid, gid = os.geteuid(), os.getegid()
if libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | (CLONE_NEWUSER if uid else 0)) != 0:
    fail("unshare")
if uid:
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
pid = os.fork()
if pid:
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
mount(None, "/", None, MS_REC | MS_PRIVATE)
mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
mount("/dev", "/dev", None, MS_BIND | MS_REC)
mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
if os.path.isdir("/dev/mqueue"):
    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
executable = sys.executable
if venv:
    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    os.mkdir(f"{stage}/venv")
    mount(venv, f"{stage}/venv", None, MS_BIND | MS_REC)
    mount(None, f"{stage}/venv", None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    executable = f"{stage}/venv/bin/{os.path.basename(sys.executable)}"
mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_bytes},mode=1777")
os.chdir("/tmp")
os.execv(executable, [executable, "-c", source, *args])
"""
HOST_TMP = Path("/tmp")  # noqa: S108 - the host's /tmp, which the sandbox must not see
# Where a venv under the host's /tmp is bound in the sandbox: folders that exist on most machines
# and that no Python lives in (the sandbox sees a fresh, empty tmpfs there).
STAGES = ("/mnt", "/srv", "/media")


def venv_placement() -> tuple[str, str]:
    """(venv, stage): this Python's venv and where the sandbox sees it, when the venv is under the
    host's /tmp (else both empty: the sandbox runs this Python where it is)."""
    prefix, base_prefix = Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()
    if HOST_TMP in base_prefix.parents:
        raise RuntimeError(f"this Python is installed under {HOST_TMP}, which the sandbox hides: use one outside it")
    if HOST_TMP not in prefix.parents:
        return "", ""
    stage = next((s for s in STAGES if os.path.isdir(s)), None)
    if stage is None:
        raise RuntimeError(
            f"the venv {prefix} is under {HOST_TMP} and none of {', '.join(STAGES)} exists to bind it at"
        )
    return str(prefix), stage


def sandbox_env(*, device: str, gpu: bool, fraction: float) -> dict:
    """The sandbox's environment: the container's (docker.ENVIRONMENT), nothing of the host's but
    its PATH and library path, and the device the worker gave it."""
    env = {
        "HOME": "/tmp",  # noqa: S108 - the sandbox's own tmpfs
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp",  # noqa: S108
        "OMP_NUM_THREADS": "1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CUDA_VISIBLE_DEVICES": device,
        "EC_TMP_BYTES": str(base.Limits().tmp_bytes),
    }
    env["EC_VENV"], env["EC_STAGE"] = venv_placement()
    if os.environ.get("LD_LIBRARY_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    if gpu:
        env[gpus.GPU_MEMORY_FRACTION_ENV] = str(fraction)
    return env


# The share of the device's memory a run may take: what the production worker sets
# (RUNNER_GPU_MEMORY_FRACTION's default).
MEMORY_FRACTION = 0.9


def start(*, device: str, gpu: bool, serve: bool) -> subprocess.Popen:
    args = [sys.executable, "-c", LAUNCHER, harness_source(), *(["--serve"] if serve else [])]
    return subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=sandbox_env(device=device, gpu=gpu, fraction=MEMORY_FRACTION),
        start_new_session=True,
    )


def run_cold(request, *, device: str, gpu: bool) -> tuple:
    """One run in a fresh harness (cold), as the backends' execute_cold runs it."""
    events: list = []
    end = protocol.EndLine()
    started = time.monotonic()
    proc = start(device=device, gpu=gpu, serve=False)
    stderr: list[bytes] = []
    stdin, _stdout, stderr_pipe = local_launcher.pipes(proc)
    threading.Thread(target=local_launcher.read_capped, args=(stderr_pipe, stderr), daemon=True).start()
    payload = protocol.request_payload(request, address_space=not gpu, processes=False, nonce=end.nonce)
    local_launcher.feed_stdin(stdin, payload)
    try:
        collector, timed_out = protocol.supervise(
            read=end.reader(lambda: proc.stdout.read1(65536)),
            kill=lambda: kill(proc),
            limits=request.limits,
            on_event=events.append,
            started=started,
            end=end,
        )
        exit_code = end.exit_code if end.exit_code is not None else proc.wait(timeout=10)
    finally:
        kill(proc)
        proc.wait()
        proc.stdout.close()
    result = protocol.run_result(
        collector=collector,
        exit_code=exit_code,
        timed_out=timed_out,
        oom_killed=end.oom,
        limits=request.limits,
        started=started,
        stderr_tail=b"".join(stderr).decode("utf-8", "replace"),
        details={"warm": False},
    )
    return result, events


class WarmHarness(warm_sandbox.WarmSandbox):
    """A harness serving runs (`--serve`), fed as the backends feed theirs."""

    backend_name = "gpu-device-check"
    processes = False  # no pids cgroup here, and RLIMIT_NPROC would count the host user's processes

    def __init__(self, *, device: str, gpu: bool):
        super().__init__(shape=(device, gpu))
        self.address_space = not gpu  # a GPU driver maps far more address space than it uses
        self.proc = start(device=device, gpu=gpu, serve=True)
        for stream, is_stdout in ((self.proc.stdout, True), (self.proc.stderr, False)):
            threading.Thread(target=self._pump, args=(stream, is_stdout), daemon=True).start()

    def _pump(self, stream, is_stdout: bool) -> None:
        while data := stream.read1(65536):
            (self._on_stdout if is_stdout else self._on_stderr)(data)
        if is_stdout:
            self._on_eof()

    def _send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _kill(self) -> None:
        kill(self.proc)

    def _close(self) -> None:
        kill(self.proc)
        self.proc.wait()

    def _exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def run(self, request) -> tuple:
        events: list = []
        result, reusable = self.execute(request, events.append)
        if result is None:
            raise RuntimeError(f"the warm harness died before the program started: {self.broken or self._diagnostics}")
        result.details["reusable"] = reusable
        return result, events

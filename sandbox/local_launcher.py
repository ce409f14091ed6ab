"""Starting and ending the `local` backend's sandbox process (local.py builds bubblewrap's command
line; this module runs it): the stage folder where each sandbox's mounts are made, the launcher
that runs in the forked child before bubblewrap (cgroup, rlimits, the tmpfs mounts with their
inode caps, the read-only binds, the drop to an unprivileged host uid), and the helpers that feed
the sandbox its program, read its stderr and kill its process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import resource
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .base import Limits, setting
from .local_cgroups import RunCgroup
from .protocol import STDERR_TAIL

# The host uid a root worker's sandboxes run as: one that no account and no file has.
HOST_UID_DEFAULT = 63999
# Mount points in the stage folder (stage_dir): the two tmpfs, the Python installation, the runtime,
# the harness's package.
STAGE_HARNESS = "harness"
STAGE_FOLDERS = ("tmp", "shm", "python", "runtime", STAGE_HARNESS)

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x1000, 0x4000, 0x40000
TMPFS_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC


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
    for name in ("", *STAGE_FOLDERS):
        entry = path / name
        with contextlib.suppress(FileExistsError):
            entry.mkdir(mode=0o755)
        st = entry.lstat()
        if entry.is_symlink() or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise OSError(f"{entry} is not this user's alone")
    return path


@dataclass(frozen=True)
class Launch:
    """What the launcher does between fork and exec of bubblewrap (see `launch_child`)."""

    limits: Limits
    cgroup: RunCgroup | None
    uid: int | None
    stage: Path
    cpu_s: int | None
    # (host path, name of its mount point in the stage folder)
    binds: tuple[tuple[str, str], ...] = ()


def launch_child(launch: Launch) -> None:
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


def pipes(proc: subprocess.Popen[bytes]) -> tuple[io.BufferedWriter, io.BufferedReader, io.BufferedReader]:
    """A sandbox's stdin, stdout and stderr. LocalBackend._start opens all three as pipes with
    Popen's default buffering, which makes them these (a buffered reader's read1 returns what has
    arrived without waiting for a full block)."""
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    if not (
        isinstance(stdin, io.BufferedWriter)
        and isinstance(stdout, io.BufferedReader)
        and isinstance(stderr, io.BufferedReader)
    ):
        raise TypeError("the sandbox process must be started with buffered pipes on stdin, stdout and stderr")
    return stdin, stdout, stderr


def feed_stdin(stdin: io.BufferedWriter, data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except (BrokenPipeError, OSError):
        # The sandbox died before reading its program; the result says so.
        pass


def read_capped(stream: io.BufferedReader, chunks: list[bytes]) -> None:
    size = 0
    while True:
        data = stream.read1(65536)
        if not data:
            return
        if size < STDERR_TAIL * 4:
            chunks.append(data)
            size += len(data)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)

"""Cgroups for the `local` backend's sandboxes (local.py): one per sandbox, made by a worker that
runs as root, holding the run's memory (tmpfs pages included, no swap), CPU and process limits for
all of the sandbox's processes together, on cgroup v1 or v2.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from itertools import count
from pathlib import Path

from .base import Limits

logger = logging.getLogger(__name__)
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "easycompilers"


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

"""The `docker` backend: one fresh container of the sandbox image per run (runner/image/).

Every limit is a container setting (no network, read-only root, tmpfs mounts with size and inode
caps, memory without swap, one CPU, a pids cap, ulimits, no capabilities, no new privileges, the
project's seccomp policy, uid 65534). The
program goes in on the container's stdin through the attach socket (never `docker exec`), the
output comes back on the same socket, and the worker enforces the wall deadline and the output
cap by killing the container, which is always removed afterwards. Labels let the sweeper and a
starting worker remove containers a dead worker left behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
import time
from datetime import UTC, datetime
from typing import Any

import docker
import requests
from docker.errors import DockerException, ImageNotFound, NotFound
from docker.types import DeviceRequest, LogConfig, Ulimit

from . import seccomp
from .base import EventSink, Limits, PooledBackend, RunRequest, RunResult, cold_slot, setting
from .gpus import GPU_MEMORY_FRACTION_ENV, LABEL_GPU, gpu_device_pick, gpu_devices_in_use
from .pool import PoolHolder, WarmSettings
from .protocol import STDERR_TAIL, EndLine, request_payload, run_result, supervise
from .warm_sandbox import WarmSandbox

# What the engine's client raises: its own errors, and the requests library's for a call that timed
# out or lost its connection (docker-py passes those through), so a slow or restarting engine ends
# a run as an error, or is logged, instead of raising through the worker.
ENGINE_ERRORS = (DockerException, requests.exceptions.RequestException)

logger = logging.getLogger(__name__)

IMAGE_DEFAULT = "easycompilers-sandbox:latest"
# A sandbox container's label; its value is the deployment's scope (RUNNER_SANDBOX_SCOPE), so a
# worker stops and sweeps only its own deployment's sandboxes on an engine that several share.
LABEL_SANDBOX = "easycompilers.sandbox"
SCOPE_DEFAULT = "1"
LABEL_RUN = "easycompilers.run"
# A warm sandbox's container: "<host>:<pid>" of the worker process that owns it.
LABEL_WARM = "easycompilers.warm"
SANDBOX_TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs
SANDBOX_SHM = "/dev/shm"  # noqa: S108 - likewise
SANDBOX_USER = 65534
ENVIRONMENT = {
    "HOME": SANDBOX_TMP,
    "LANG": "C.UTF-8",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": SANDBOX_TMP,
    "OMP_NUM_THREADS": "1",
    "PATH": "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin",
}
# A stray is a sandbox container older than the longest run could last, plus a margin.
STRAY_AGE_S = Limits.WALL_CAP_S + 60


class DockerBackend(PooledBackend):
    name = "docker"

    def __init__(self, *, image: str | None = None, gpu: bool | None = None, client=None):
        self.image = image or setting("RUNNER_DOCKER_IMAGE", IMAGE_DEFAULT)
        # Whether this worker serves GPU runs (its `gpu` queue); a GPU run elsewhere gets none.
        self.gpu = setting("RUNNER_GPU", False) if gpu is None else gpu
        self.gpu_devices = list(setting("RUNNER_GPU_DEVICES", ["0"]))
        self.scope = str(setting("RUNNER_SANDBOX_SCOPE", SCOPE_DEFAULT))
        self._client = client
        self.warm = PoolHolder(name=self.name, start=self._warm_start)

    @property
    def client(self):
        if self._client is None:
            self._client = docker.from_env(timeout=30)
        return self._client

    # -- availability -------------------------------------------------------------------------
    @classmethod
    def unavailable_reason(cls, image: str | None = None) -> str:
        """Empty when an engine answers and the sandbox image exists; else what is missing."""
        image = image or setting("RUNNER_DOCKER_IMAGE", IMAGE_DEFAULT)
        try:
            client = docker.from_env(timeout=5)
            client.ping()
        except ENGINE_ERRORS as e:
            return f"no Docker engine answers: {e}"
        try:
            client.images.get(image)
        except ImageNotFound:
            return f"the sandbox image {image} is missing: run `bash runner/image/build.sh`"
        except ENGINE_ERRORS as e:
            return f"the Docker engine could not be asked for {image}: {e}"
        finally:
            client.close()
        return ""

    @classmethod
    def available(cls) -> bool:
        return not cls.unavailable_reason()

    # -- the container ------------------------------------------------------------------------
    def container_config(self, request: RunRequest) -> dict[str, Any]:
        """The keyword arguments for `containers.create`: every limit of the run."""
        limits = request.limits
        config: dict[str, Any] = {
            "image": self.image,
            "stdin_open": True,
            "tty": False,
            "detach": True,
            "network_mode": "none",
            "read_only": True,
            # Every writable mount has a size and an inode cap, and belongs to the sandbox's user
            # (so a warm sandbox's supervisor can put its times back between runs).
            "tmpfs": {
                SANDBOX_TMP: _tmpfs(limits.tmp_bytes, limits.tmp_inodes),
                SANDBOX_SHM: _tmpfs(limits.shm_bytes, limits.shm_inodes),
            },
            "mem_limit": limits.memory_bytes,
            "memswap_limit": limits.memory_bytes,
            "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.pids,
            "ulimits": [
                Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
                Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
                Ulimit(name="core", soft=0, hard=0),
            ],
            "cap_drop": ["ALL"],
            # The project's own seccomp policy (seccomp.py), not the engine's default, which
            # varies with its version.
            "security_opt": ["no-new-privileges", f"seccomp={seccomp.docker_profile()}"],
            "user": f"{SANDBOX_USER}:{SANDBOX_USER}",
            "working_dir": SANDBOX_TMP,
            "hostname": "sandbox",
            "environment": dict(ENVIRONMENT),
            "labels": {LABEL_RUN: request.run_id, LABEL_SANDBOX: self.scope},
            # Output goes to the worker over the attach socket only, never to disk on the host.
            "log_config": LogConfig(type=LogConfig.types.NONE),
        }
        if request.gpu and self.gpu:
            # One GPU (or MIG slice) of the worker's list, the least used (gpus.py); CUDA stays
            # uninitialised until the program uses it.
            devices = self.gpu_devices
            in_use = gpu_devices_in_use(self.client) if len(devices) > 1 else []  # one device: no choice
            device = gpu_device_pick(devices=devices, in_use=in_use)
            config["device_requests"] = [DeviceRequest(device_ids=[device], capabilities=[["gpu"]])]
            config["labels"][LABEL_GPU] = device
            # The harness caps torch's allocations on the device at this share of its memory.
            config["environment"][GPU_MEMORY_FRACTION_ENV] = str(setting("RUNNER_GPU_MEMORY_FRACTION", 0.9))
        return config

    @cold_slot()
    def execute_cold(self, request: RunRequest, on_event: EventSink) -> RunResult:
        """A fresh container for this one run."""
        limits = request.limits
        try:
            container = self.client.containers.create(**self.container_config(request))
        except ENGINE_ERRORS as e:
            return RunResult(status="error", reason=f"the sandbox container could not be created: {e}")
        started = time.monotonic()
        frames = None
        end = EndLine()
        try:
            try:
                sock = container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
                raw = sock._sock
                # The client's request timeout must not end a quiet run: the deadline is ours.
                raw.settimeout(None)
                container.start()
                # One JSON line; no half-close (the engine would end the whole attach stream).
                raw.sendall(request_payload(request, address_space=False, processes=False, nonce=end.nonce))
            except (*ENGINE_ERRORS, OSError) as e:
                return RunResult(
                    status="error",
                    reason=f"the sandbox container could not start: {e}",
                    duration_ms=int((time.monotonic() - started) * 1000),
                    details={"backend": self.name, "container": container.short_id},
                )
            frames = Frames(raw)

            def kill() -> None:
                with contextlib.suppress(*ENGINE_ERRORS):  # already gone
                    container.kill()

            collector, timed_out = supervise(
                read=end.reader(frames.read_stdout),
                kill=kill,
                limits=limits,
                on_event=on_event,
                started=started,
                end=end,
            )
            exit_code: int | None  # None: the engine never said (_finish)
            if end.exit_code is not None:
                # The end line says how the program ended (its OOM kills too): the container is
                # removed below without waiting for it to exit.
                exit_code, oom_killed = end.exit_code, end.oom
            else:
                exit_code, oom_killed = self._finish(container)
        finally:
            if frames is not None:
                frames.close()
            try:
                container.remove(force=True)
            except NotFound:
                pass
            except ENGINE_ERRORS:
                logger.exception("could not remove sandbox container %s; the sweeper will", container.short_id)
        return run_result(
            collector=collector,
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom_killed,
            limits=limits,
            started=started,
            stderr_tail=frames.stderr_text(),
            details={"backend": self.name, "warm": False, "container": container.short_id},
        )

    def _finish(self, container) -> tuple[int | None, bool]:
        try:
            status = container.wait(timeout=10)
            container.reload()
        except Exception:  # the engine's timeout surfaces as a requests error
            try:
                container.kill()
                status = container.wait(timeout=10)
                container.reload()
            except Exception:
                logger.exception("sandbox container %s did not stop", container.short_id)
                return None, False
        return status.get("StatusCode"), bool(container.attrs.get("State", {}).get("OOMKilled"))

    def stop(self, run_id: str) -> None:
        """Kills a run's container wherever it runs (this worker or a dead one); the worker that
        supervises it then sees the stream end and removes it."""
        try:
            labels = [f"{LABEL_RUN}={run_id}", f"{LABEL_SANDBOX}={self.scope}"]
            containers = self.client.containers.list(all=True, filters={"label": labels})
        except ENGINE_ERRORS:
            logger.exception("could not look up the sandbox of run %s", run_id)
            return
        for container in containers:
            with contextlib.suppress(*ENGINE_ERRORS):  # already stopped or removed
                container.remove(force=True)
        self._warm_stop(run_id)

    def _warm_start(self, shape: tuple) -> DockerWarmSandbox:
        limits, gpu = shape
        return DockerWarmSandbox(backend=self, limits=limits, gpu=gpu)

    # -- strays -------------------------------------------------------------------------------
    def cleanup_strays(self, *, max_age_s: float = STRAY_AGE_S) -> int:
        """Removes sandbox containers older than any run could last (a dead worker's), and warm
        ones whose worker process is gone (on this host) or that outlived any warm sandbox."""
        removed = 0
        now = datetime.now(UTC)
        try:
            containers = self.client.containers.list(all=True, filters={"label": f"{LABEL_SANDBOX}={self.scope}"})
        except ENGINE_ERRORS:
            logger.exception("could not list sandbox containers")
            return 0
        warm_max_age_s = WarmSettings.from_settings().max_age_s + max_age_s
        for container in containers:
            created = _parse_created(container.attrs.get("Created", ""))
            age_s = (now - created).total_seconds() if created is not None else float("inf")
            owner = container.labels.get(LABEL_WARM)
            if owner is not None:
                if _warm_owner_alive(owner) and age_s < warm_max_age_s:
                    continue
            elif age_s < max_age_s:
                continue
            try:
                container.remove(force=True)
                removed += 1
            except NotFound:
                pass
            except ENGINE_ERRORS:
                logger.exception("could not remove stray sandbox %s", container.short_id)
        return removed


def _tmpfs(size: int, inodes: int) -> str:
    return f"size={size},nr_inodes={inodes},mode=1777,uid={SANDBOX_USER},gid={SANDBOX_USER}"


def _warm_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _warm_owner_alive(owner: str) -> bool:
    """Whether the worker process named by a warm container's label may still be alive: on this
    host, its pid must exist; another host's cannot be checked (its age rule applies)."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parse_created(value: str) -> datetime | None:
    # Docker writes nanoseconds ("2025-01-02T03:04:05.123456789Z"); Python takes microseconds.
    try:
        head, _, frac = value.rstrip("Z").partition(".")
        return datetime.fromisoformat(f"{head}.{(frac or '0')[:6]}+00:00")
    except ValueError:
        return None


class Frames:
    """Reads Docker's multiplexed attach stream: 8-byte headers (stream, size), then the data."""

    def __init__(self, sock):
        self.sock = sock
        self.stderr = bytearray()

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return b""
            buf += chunk
        return bytes(buf)

    def read_stdout(self) -> bytes:
        """The next piece of the container's stdout; b"" when the stream ends."""
        while True:
            header = self._exact(8)
            if not header:
                return b""
            kind, size = header[0], struct.unpack(">I", header[4:])[0]
            # Large frames are read in pieces through the same loop.
            data = self._exact(size) if size else b""
            if size and not data:
                return b""
            if kind == 1:
                return data
            if kind == 2 and len(self.stderr) < STDERR_TAIL * 4:
                self.stderr += data[: STDERR_TAIL * 4]

    def stderr_text(self) -> str:
        return bytes(self.stderr).decode("utf-8", "replace")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class DockerWarmSandbox(WarmSandbox):
    """A container of the sandbox image whose harness serves runs (pool.py): the cold
    container's settings, the harness as PID 1 with --serve. Stdin closes when the worker's attach
    socket does (StdinOnce), so a container whose worker died ends, and the engine removes it."""

    backend_name = "docker"
    # The container's memory and pids cgroups are the limits, as for a cold run.
    address_space = False
    processes = False

    def __init__(self, *, backend: DockerBackend, limits: Limits, gpu: bool):
        super().__init__(shape=(limits, gpu))
        config = backend.container_config(RunRequest(run_id=f"warm-{self.id}", code="", limits=limits, gpu=gpu))
        config["labels"] = {LABEL_SANDBOX: backend.scope, LABEL_WARM: _warm_owner()}
        config["command"] = ["--serve"]
        config["detach"] = False  # with stdin_open: StdinOnce
        config["auto_remove"] = True
        self.container = backend.client.containers.create(**config)
        self._lock = threading.Lock()
        try:
            sock = self.container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self.sock = sock._sock
            self.sock.settimeout(None)
            self.container.start()
        except (*ENGINE_ERRORS, OSError):
            with contextlib.suppress(*ENGINE_ERRORS):
                self.container.remove(force=True)
            raise
        threading.Thread(target=self._pump, name=f"warm-{self.id}", daemon=True).start()

    def _pump(self) -> None:
        frames = Frames(self.sock)
        try:
            while True:
                header = frames._exact(8)
                if not header:
                    return
                kind, size = header[0], struct.unpack(">I", header[4:])[0]
                data = frames._exact(size) if size else b""
                if size and not data:
                    return
                if kind == 1:
                    self._on_stdout(data)
                elif kind == 2:
                    self._on_stderr(data)
        except OSError:
            return
        finally:
            self._on_eof()

    def _send(self, data: bytes) -> None:
        with self._lock:
            self.sock.sendall(data)

    def _kill(self) -> None:
        with contextlib.suppress(*ENGINE_ERRORS):
            self.container.kill()

    def _exit_code(self) -> int | None:
        try:
            return self.container.wait(timeout=5).get("StatusCode")
        except Exception:  # removed already (auto_remove), or the engine's timeout
            return None

    def _close(self) -> None:
        with contextlib.suppress(*ENGINE_ERRORS):
            self.container.remove(force=True)
        # A removal the engine already had under way (auto_remove after a kill) answers at once:
        # the container counts in the pool's books until it is really gone.
        with contextlib.suppress(Exception):
            self.container.wait(condition="removed", timeout=10)
        with contextlib.suppress(OSError):
            self.sock.close()

    def memory_kib(self) -> int:
        """The container's memory without the page cache (shared with every other container)."""
        stats = self.container.stats(stream=False).get("memory_stats", {})
        inner = stats.get("stats", {})
        used = inner.get("rss", inner.get("anon"))
        return int(used if used is not None else stats.get("usage", 0)) // 1024

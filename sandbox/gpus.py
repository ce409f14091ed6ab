"""One GPU per GPU sandbox, from the worker's device list (RUNNER_GPU_DEVICES).

A GPU worker host may have several GPUs (or MIG slices); each sandbox gets exactly one, the one
the fewest of this engine's sandboxes hold now, so runs spread over the devices and none sees the
others. The engine is the record (a label on each container), so every worker process on the
host, and one that restarted, agree; picks made in this process that the engine may not list yet
count too.
"""

from __future__ import annotations

import threading
import time

LABEL_GPU = "easycompilers.gpu"
# Set in a GPU sandbox's environment: the share of the device's memory the run may allocate, which
# the harness passes to torch.cuda.set_per_process_memory_fraction in each run's own process.
GPU_MEMORY_FRACTION_ENV = "EASYCOMPILERS_GPU_MEMORY_FRACTION"
# A pick counts on its own until its container surely shows in the engine's list.
PENDING_S = 30.0

_lock = threading.Lock()
_pending: list[tuple[float, str]] = []


def gpu_device_pick(*, devices: list[str], in_use: list[str], now: float | None = None) -> str:
    """The device for a new sandbox: the least used of `devices` (ties: the first listed), counting
    the devices of the engine's sandboxes (`in_use`) and this process's recent picks."""
    if not devices:
        raise ValueError("no GPU devices configured (RUNNER_GPU_DEVICES)")
    now = time.monotonic() if now is None else now
    with _lock:
        _pending[:] = [(at, device) for at, device in _pending if now - at < PENDING_S]
        counts = {device: 0 for device in devices}
        for device in [*in_use, *(device for _, device in _pending)]:
            if device in counts:
                counts[device] += 1
        device = min(devices, key=lambda d: (counts[d], devices.index(d)))
        _pending.append((now, device))
    return device


def gpu_devices_in_use(client) -> list[str]:
    """The devices the engine's GPU sandboxes hold now."""
    containers = client.containers.list(all=True, filters={"label": LABEL_GPU})
    return [container.labels.get(LABEL_GPU, "") for container in containers]

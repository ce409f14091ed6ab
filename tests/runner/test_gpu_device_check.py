"""scripts/gpu_device_check.py, the GPU path's check on a machine with a GPU and no Docker, run here
with --cpu so it cannot rot: every case as expected, and the host's /tmp and /dev/shm untouched by
the warm harness, which empties its own at its start and after each run."""

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
CASES = (
    "Part 10 mixed-precision-anywhere: solution",
    "Part 10 mixed-precision-anywhere: starter",
    "allocate past the memory limit",
    "the next run, after the memory stop",
    "list the devices",
    "device choice: 2 devices by UUID, none in use",
    "device choice: 4 devices by index, 1 to 3 in use",
    "device choice: 4 devices: the GPU and 3 MIG UUIDs, the first two in use",
)


def namespaces_refused() -> str:
    """Why this machine cannot give the harness a PID namespace of its own ('' when it can)."""
    if not shutil.which("unshare"):
        return "util-linux's unshare is not installed (the probe for it)"
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, text=True)
    return probe.stderr.strip() if probe.returncode else ""


@pytest.mark.services
def test_the_gpu_device_check_passes_every_case_on_the_cpu_and_leaves_the_host_alone():
    refused = namespaces_refused()
    if refused:
        service_missing(f"no PID namespace for the harness here (root or user namespaces): {refused}")
    markers = [Path("/tmp") / f"gpu-device-check-{uuid.uuid4().hex}", Path("/dev/shm") / f"gdc-{uuid.uuid4().hex}"]
    for marker in markers:
        marker.write_text("the host's, not the sandbox's")
    try:
        done = subprocess.run(
            [sys.executable, "scripts/gpu_device_check.py", "--cpu"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert [m.read_text() for m in markers] == ["the host's, not the sandbox's"] * 2
    finally:
        for marker in markers:
            marker.unlink(missing_ok=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split(" | ")[0].strip(): line for line in done.stdout.splitlines() if " | " in line}
    for case in CASES:
        assert case in rows, f"no row for {case!r}:\n{done.stdout}"
        assert rows[case].rstrip().endswith("| yes"), rows[case]
    # Cold and warm were both timed where the case runs code.
    solution = rows["Part 10 mixed-precision-anywhere: solution"].split(" | ")
    assert all(cell.strip().isdigit() for cell in solution[3:5]), solution


def test_the_gpu_device_check_says_so_when_it_finds_no_gpu(tmp_path):
    """Without --cpu on a machine with no GPU it stops at once and says how to run it here."""
    done = subprocess.run(
        [sys.executable, "scripts/gpu_device_check.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tmp_path)},  # no nvidia-smi on this PATH, whatever the machine has
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "expected one NVIDIA GPU, nvidia-smi lists 0; --cpu runs without one" in done.stdout

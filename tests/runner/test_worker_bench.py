"""bench/run_latency.py runs end to end in a quick smoke (it starts its own web app and worker)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner.worker import backend_required, services_required

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.services
def test_the_latency_benchmark_runs_and_loses_no_run(db):
    services_required()
    backend_required("local")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # A Redis database of its own: the test session's worker consumes the same queues on the test
    # session's, and would take the benchmark's runs (whose rows live in another database).
    env["REDIS_URL"] = env["REDIS_URL"].rsplit("/", 1)[0] + "/14"

    # No waiting for an idle machine before each part: a smoke measures nothing, and the test
    # session's own worker keeps the machine busy (the two waits took 4 minutes of CI).
    argv = ["bench/run_latency.py", "--runs", "2", "--backends", "local", "--learners", "2", "--per-learner", "1"]
    argv += ["--settle-s", "0"]
    out = subprocess.run(
        [sys.executable, *argv, "--database", "ec_bench_smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )

    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for line in ("API, local backend, sequential", "API, local backend, 2 learners x 1", "bare python"):
        assert line in out.stdout


def test_the_floor_forks_the_program_with_torch_loaded_and_refuses_a_failing_one():
    floor = [sys.executable, "bench/fork_floor.py", "3"]
    drawn = "import torch, matplotlib.pyplot as plt\nplt.plot(torch.arange(3))\nplt.show()\nprint('x' * 100_000)\n"

    ran = subprocess.run(floor, cwd=ROOT, input=drawn, capture_output=True, text=True, timeout=120, check=False)
    failed = subprocess.run(floor, cwd=ROOT, input="1 / 0\n", capture_output=True, text=True, timeout=120, check=False)

    assert ran.returncode == 0, ran.stderr[-2000:]
    times = json.loads(ran.stdout)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert failed.returncode != 0 and "failed" in failed.stderr

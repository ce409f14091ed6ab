#!/usr/bin/env python
"""Part 8's training exercise, run as the platform runs it: does the reference solution reach the
loss its instructions state, within the exercise's time limit, every time?

Reads the demo course folder as `validate_course` does (course_read), then runs the solution of
`train-on-the-story` with its check `--runs` times (default 10) through the sandbox backend
(`--backend`, default docker), each with the exercise's own limits and the course modules, each in
a fresh sandbox (no owner, so never a warm one). The solution seeds torch, so every run trains
the same model; what varies is the time. Prints per run: the sandbox's duration, the wall time
around the call (container start included), the status, the whole-story loss the check measured
against the goal, and whether the check passed; then passes (x of N), median and p95.

    .venv/bin/python bench/training_exercise.py [--runs 10] [--backend docker|local]

Timings depend on what else the machine is doing: the sandbox gives the run one CPU, not an idle one.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE_DIR = ROOT / "courses" / "content" / "transformers"
EXERCISE_SLUG = "train-on-the-story"
# The check states the loss it measured as "... at 1.05 nats" (pass and fail alike).
LOSS_RE = re.compile(r"at (\d+\.\d+) nats")
GOAL_RE = re.compile(r"^GOAL = ([0-9.]+)$", re.MULTILINE)


def main() -> int:
    args = parse_args()
    # The course reader lives beside the models, so Django is set up; nothing touches a database.
    var = tempfile.mkdtemp(prefix="ec-bench-training-")
    os.environ.update(
        VAR_DIR=var, DATABASE_URL=f"sqlite:///{var}/db.sqlite3", DJANGO_SETTINGS_MODULE="ecplatform.settings.test"
    )
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]
    import django

    django.setup()
    from courses.services.content_io import course_read
    from sandbox import backend_get
    from sandbox.base import Limits, RunRequest

    spec = course_read(path=COURSE_DIR)
    exercise = next(e for chapter in spec.chapters for e in chapter.exercises if e.slug == EXERCISE_SLUG)
    modules = tuple((module.name, module.source) for module in spec.modules)
    goal = float(GOAL_RE.search(exercise.check_code).group(1))
    limit_s = float(min(exercise.time_limit_s, Limits.WALL_CAP_S))
    backend = backend_get(args.backend)
    print(f"{EXERCISE_SLUG}: solution + check, {args.runs} runs on the {backend.name} backend, limit {limit_s:.0f} s")
    print(f"goal: whole-story loss below {goal} nats\n")
    print(f"{'run':>3}  {'sandbox s':>9}  {'wall s':>6}  {'status':<9}  {'loss':>5}  passed")

    durations, walls, passes = [], [], 0
    for number in range(1, args.runs + 1):
        events: list[dict] = []
        request = RunRequest(
            run_id=f"bench-training-{uuid.uuid4().hex[:12]}",
            code=exercise.solution_code,
            check_code=exercise.check_code,
            limits=Limits(wall_s=limit_s),
            modules=modules,
        )
        started = time.monotonic()
        result = backend.execute(request, events.append)
        wall = time.monotonic() - started
        checks = [event for event in events if event.get("type") == "check"]
        passed = result.status == "succeeded" and any(check.get("passed") is True for check in checks)
        found = LOSS_RE.search(" ".join(str(check.get("message", "")) for check in checks))
        loss = f"{float(found.group(1)):.2f}" if found else "-"
        passes += passed
        durations.append(result.duration_ms / 1000)
        walls.append(wall)
        status = result.status + (f" ({result.reason})" if result.reason and not passed else "")
        print(f"{number:>3}  {durations[-1]:>9.1f}  {wall:>6.1f}  {status:<9}  {loss:>5}  {'yes' if passed else 'no'}")

    print(f"\npassed {passes} of {args.runs} (loss below {goal} and within the {limit_s:.0f} s limit)")
    print(f"sandbox duration: median {statistics.median(durations):.1f} s, p95 {p95(durations):.1f} s")
    print(f"wall time:        median {statistics.median(walls):.1f} s, p95 {p95(walls):.1f} s")
    return 0 if passes == args.runs else 1


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile: with 10 runs, the slowest of them."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="How many times to run the solution (default 10).")
    parser.add_argument(
        "--backend", choices=("docker", "local"), default="docker", help="The sandbox (default docker)."
    )
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())

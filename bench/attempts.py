#!/usr/bin/env python
"""A learner's second visit, from outside: the attempt history at a learner with many attempts.

It starts what it measures itself (bench/run_latency.py's set-up: a fresh database, the demo
course, a learner, uvicorn), gives the learner `--attempts` runs of one exercise (1,000 by default,
as a learner who pressed Run a thousand times; other learners' runs around them), then reads,
`--reads` times each, p50 and p95 in ms:

- history: `GET /api/exercises/<id>/attempts/` (the panel's first page, 50 attempts, and the count);
- attempt: `GET /api/exercises/<id>/attempts/<run id>/` (one attempt's code, for a diff or a restore);
- chapter page (baseline): the exercise's chapter as the same learner reads it, logged in;

and each as a ratio to the chapter page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/attempts.py [--attempts 1000] [--reads 200]
    .venv/bin/python bench/attempts.py --embedded       # SQLite, as `make run` serves
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_latency import Bench, bench_from_env, learner_browser, percentile

SETUP = """
import json, random
from datetime import timedelta
from django.utils import timezone
from accounts.models import User
from accounts.services import user_create
from courses.models import Exercise
from runner.models import Run
exercise = Exercise.objects.get(pk={exercise})
learner = User.objects.get(username="bench0")
others = [user_create(username=f"other{{i}}", password="bench-pw-1") for i in range(20)]
now = timezone.now()
code = exercise.starter_code
rows = []
for i in range({attempts}):
    passed = i % 7 == 6
    rows.append(Run(user=learner, exercise=exercise, code=code + f"\\n# attempt {{i}}\\n",
                    status="succeeded" if passed or i % 3 else "failed", passed=passed,
                    failure="" if passed else "The largest weight is still on 'the'",
                    outputs=[{{"type": "stream", "name": "stdout", "text": "x" * 400}}],
                    created_at=now - timedelta(minutes={attempts} - i), finished_at=now))
for user in others:
    for i in range(50):
        rows.append(Run(user=user, exercise=exercise, code=code, status="failed", created_at=now - timedelta(minutes=i),
                        finished_at=now))
Run.objects.bulk_create(rows, batch_size=500)
last = Run.objects.filter(user=learner, exercise=exercise).order_by("-created_at").first()
chapter = exercise.chapter
print(json.dumps({{"run": str(last.pk), "chapter": f"/courses/{{chapter.course.slug}}/{{chapter.slug}}/"}}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=1000, help="the learner's attempts at the exercise (1000)")
    parser.add_argument("--reads", type=int, default=200, help="reads of each page (200)")
    parser.add_argument("--embedded", action="store_true", help="SQLite in a folder of its own, as `make run`")
    parser.add_argument("--database", default="ec_bench_attempts", help="database to (re)create for the benchmark")
    args = parser.parse_args()
    chosen = bench_from_env(embedded=args.embedded, database=args.database, prefix="attempts-bench-")
    if chosen is None:
        print("bench/attempts.py needs DATABASE_URL (PostgreSQL), or --embedded", file=sys.stderr)
        return 2
    bench, setup = chosen
    try:
        bench.prepare(learners=1)
        script = SETUP.format(exercise=bench.exercise_id, attempts=args.attempts)
        made = json.loads(bench._manage("shell", "-c", script, capture=True).strip().splitlines()[-1])
        figures = measure(bench, made, attempts=args.attempts, reads=args.reads)
    finally:
        bench.close(keep_db=False)
    report(figures, setup=setup, attempts=args.attempts, reads=args.reads)
    return 0


def measure(bench: Bench, made: dict, *, attempts: int, reads: int) -> dict[str, list[float]]:
    api = bench._session()
    api.headers["Authorization"] = f"Token {bench.tokens[0]}"
    browser = learner_browser(bench.web_url)
    urls = {
        "history": (api, f"{bench.web_url}/api/exercises/{bench.exercise_id}/attempts/"),
        "attempt": (api, f"{bench.web_url}/api/exercises/{bench.exercise_id}/attempts/{made['run']}/"),
        "chapter page (baseline)": (browser, f"{bench.web_url}{made['chapter']}"),
    }
    first = api.get(urls["history"][1], timeout=30).json()
    assert (len(first["attempts"]) == 50 and first["count"] >= 1000) or first["count"] == len(first["attempts"])
    figures: dict[str, list[float]] = {name: [] for name in urls}
    for _ in range(reads):
        for name, (session, url) in urls.items():  # interleaved, so drift touches each alike
            started = time.perf_counter()
            response = session.get(url, timeout=30)
            figures[name].append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
    return figures


def report(figures: dict[str, list[float]], *, setup: str, attempts: int, reads: int) -> None:
    baseline = statistics.median(figures["chapter page (baseline)"])
    print(f"\n{setup}: a learner with {attempts} attempts at one exercise, {reads} reads of each")
    print(f"{'':26} {'p50 ms':>8} {'p95 ms':>8} {'p50 / chapter':>14}")
    for name, values in figures.items():
        p50 = statistics.median(values)
        print(f"{name:26} {p50:8.1f} {percentile(values, 0.95):8.1f} {p50 / baseline:14.2f}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Instructor dashboard timings on generated courses of 10,000 and 100,000 learners, against PostgreSQL.

One command does it all, size by size (each in its own process, on its own database on the server
named by DATABASE_URL, `ec_bench_dash_10k` and `ec_bench_dash_100k` by default): creates and
migrates the database, generates the course when it is not there yet (`manage.py
generate_course_data`, 20 runs per learner: 200,000 and 2,000,000), builds the dashboards'
summaries when the course has none (`rollups_rebuild`, where the teaching app has them), then
times, through Django's test Client as the course's instructor, every dashboard page and API (all
learners, one cohort, a range covering everything, the last 30 days for the course and a cohort,
a past month, one learner) and both CSV exports. Prints p50 and p95 per request with its query
count and bytes; then one learner's own path among all the others (the course outline, a part's
page, the completion page and a run's reads before its sandbox), which must not grow with the
number of learners; and what keeping the dashboards in step adds to a run's end (rolled back); each
CSV export is also read once in a forked child whose peak RSS is printed beside the parent's RSS (a
streamed export holds one chunk, whatever the size).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/dashboard.py \\
        [--sizes 10000,100000] [--repeat N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
SLUG = "bench-generated"
RUNS_PER_LEARNER = 20


def main() -> int:
    args = parse_args()
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not base.startswith("postgres"):
        print("bench/dashboard.py needs DATABASE_URL pointing at PostgreSQL", file=sys.stderr)
        return 2
    if args.one is not None:
        return bench_one(args=args, base=base, learners=args.one)
    status = 0
    for learners in (int(size) for size in args.sizes.split(",")):
        # A process per size: Django reads its database once, at setup.
        command = [sys.executable, __file__, "--one", str(learners), "--database-prefix", args.database_prefix]
        if args.repeat:
            command += ["--repeat", str(args.repeat)]
        status |= subprocess.call(command)
    return status


def bench_one(*, args, base: str, learners: int) -> int:
    name = f"{args.database_prefix}_{database_suffix(learners)}"
    database_create(base=base, name=name)
    os.environ["DATABASE_URL"] = urlunsplit(urlsplit(base)._replace(path=f"/{name}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.test")
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

    import django

    django.setup()
    from django.apps import apps
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from courses.models import Course, ExerciseState

    call_command("migrate", verbosity=0)
    course = Course.objects.filter(slug=SLUG).first()
    if course is None:
        started = time.monotonic()
        call_command(
            "generate_course_data", slug=SLUG, learners=learners, runs=learners * RUNS_PER_LEARNER, verbosity=1
        )
        print(f"generated in {time.monotonic() - started:.1f} s")
        course = Course.objects.get(slug=SLUG)
    if apps.is_installed("teaching"):
        from teaching.models import ExerciseSummary
        from teaching.services.rollups import rollups_rebuild

        if not ExerciseSummary.objects.filter(course=course).exists():
            started = time.monotonic()
            made = rollups_rebuild(course=course)
            print(f"summaries built from the stored rows in {time.monotonic() - started:.1f} s: {made}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute(
            "SELECT COUNT(*) FROM runner_run r JOIN courses_exercise e ON e.id = r.exercise_id "
            "JOIN courses_chapter c ON c.id = e.chapter_id WHERE c.course_id = %s",
            [course.pk],
        )
        runs = cursor.fetchone()[0]
    enrolled = course.enrolments.count()
    cohort = course.cohorts.order_by("name").first()
    learner = (
        ExerciseState.objects.filter(exercise__chapter__course=course).order_by("id").values_list("user_id", flat=True)
    ).first()

    today = dt.datetime.now(dt.UTC).date()
    last_30_days = (today - dt.timedelta(days=29)).isoformat()
    past_month = ((today - dt.timedelta(days=59)).isoformat(), (today - dt.timedelta(days=30)).isoformat())
    client = Client()
    client.force_login(course.instructors.get())
    page, api = f"/teach/{SLUG}/", f"/api/teach/courses/{SLUG}/"
    cases = [
        ("teaching home", "/teach/"),
        ("dashboard page", page),
        (f"dashboard page, cohort {cohort.name!r}", f"{page}?cohort={cohort.pk}"),
        ("dashboard page, date range", f"{page}?start=2000-01-01&end=2100-01-01"),
        # Ranges narrower than the course's history sum the day counts; one that ended earlier also counts
        # the learners enrolled by its end one by one (the funnel's starters, the stuck list).
        ("dashboard page, last 30 days", f"{page}?start={last_30_days}"),
        ("dashboard page, cohort, last 30 days", f"{page}?cohort={cohort.pk}&start={last_30_days}"),
        ("dashboard page, a past month", f"{page}?start={past_month[0]}&end={past_month[1]}"),
        ("learner page", f"{page}learners/{learner}/"),
        ("API dashboard", f"{api}dashboard/"),
        ("API dashboard, cohort", f"{api}dashboard/?cohort={cohort.pk}"),
        ("API dashboard, date range", f"{api}dashboard/?start=2000-01-01&end=2100-01-01"),
        ("API dashboard, last 30 days", f"{api}dashboard/?start={last_30_days}"),
        ("API learner", f"{api}learners/{learner}/"),
        ("CSV learners' progress", f"{page}export/learners.csv"),
        ("CSV question statistics", f"{page}export/questions.csv"),
    ]
    repeat = args.repeat or (10 if learners <= 10_000 else 5)
    load = os.getloadavg()
    print(
        f"\ncourse {SLUG!r} on {name}: {enrolled} learners, {runs} runs; {repeat} requests each "
        f"(after 1 warm-up); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs\n"
    )
    print(f"{'request':<38} {'p50 ms':>9} {'p95 ms':>9} {'queries':>8} {'bytes':>10}")
    for label, url in cases:
        times, queries, size = [], 0, 0
        for i in range(repeat + 1):
            started = time.perf_counter()
            queries, size = request(client, url)
            if i:
                times.append((time.perf_counter() - started) * 1000)
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        print(f"{label:<38} {statistics.median(times):>9.1f} {p95:>9.1f} {queries:>8} {size:>10}", flush=True)
    print()
    bench_learner(course=course, learner=learner, repeat=repeat)
    if apps.is_installed("teaching"):
        print()
        bench_writes(course=course, repeat=max(repeat, 20))
    print()
    for label, url in cases:
        if url.endswith(".csv"):
            parent, child = rss_kib(), peak_rss_of(lambda url=url: request(client, url))
            print(f"{label:<38} peak RSS {child / 1024:.1f} MiB (the process before it: {parent / 1024:.1f} MiB)")
    return 0


def bench_learner(*, course, learner: int, repeat: int) -> None:
    """One learner's own path among all the others: what they read must not grow with the number of
    learners (each is read through the learner's own rows)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from runner.models import Run
    from runner.services import run_request_read

    # A learner well into the course: one who ran an exercise of Part 3 or later.
    run = (
        Run.objects.filter(exercise__chapter__course=course, exercise__chapter__number__gte=3)
        .select_related("exercise__chapter")
        .order_by("id")
        .first()
    )
    learner = run.user_id if run is not None else learner
    client = Client()
    client.force_login(get_user_model().objects.get(pk=learner))
    part = course.chapters.filter(number__gte=2, exercises__isnull=False).order_by("number").first()
    cases = [
        ("learner: course outline", lambda: request(client, f"/courses/{course.slug}/")),
        (f"learner: Part {part.number} page", lambda: request(client, f"/courses/{course.slug}/{part.slug}/")),
        ("learner: completion page", lambda: request(client, f"/courses/{course.slug}/complete/")),
    ]
    if run is not None:
        cases.append(
            (f"learner: a Part {run.exercise.chapter.number} run's reads", lambda: run_request_read(run_id=run.pk))
        )
    print(f"{'learner request':<38} {'p50 ms':>9} {'p95 ms':>9}")
    for label, call in cases:
        times = []
        for i in range(repeat + 1):
            started = time.perf_counter()
            call()
            if i:
                times.append((time.perf_counter() - started) * 1000)
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        print(f"{label:<38} {statistics.median(times):>9.1f} {p95:>9.1f}", flush=True)


def bench_writes(*, course, repeat: int) -> None:
    """What keeping the dashboards in step costs a worker: the time counting one finished run of
    one of the busiest learners takes (teaching.services.outbox.run_counted, which a worker
    runs just after the learner has the run's result). The runs are counted one after another
    today, in one transaction rolled back at the end so the course stays as generated: the first
    makes the day's rows, the rest move them, as a learner's runs do."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from runner.models import Run
    from teaching.models import ExerciseSummary
    from teaching.services.outbox import run_counted

    busiest = ExerciseSummary.objects.filter(course=course).order_by("-runs").values("user_id", "exercise_id")[0]
    times, queries = [], []
    with transaction.atomic():
        for i in range(repeat):
            with transaction.atomic(), CaptureQueriesContext(connection) as captured:
                now = timezone.now()
                started = time.perf_counter()
                run_counted(
                    {
                        **busiest,
                        "status": Run.Status.SUCCEEDED,
                        "passed": i == repeat - 1,
                        "limit": Run.Limit.NONE,
                        "created_at": now,
                        "finished_at": now,
                        "duration_ms": 650 + 10 * i,
                        "error_name": "" if i == repeat - 1 else ("NameError", "TypeError")[i % 2],
                    }
                )
                times.append((time.perf_counter() - started) * 1000)
            queries.append(len(captured))
        transaction.set_rollback(True)
    p95 = statistics.quantiles(times, n=20)[-1]
    label = f"{repeat} runs counted (after their end)"
    print(f"{label:<38} {statistics.median(times):>9.1f} {p95:>9.1f} {statistics.median(queries):>8.0f}")


def request(client, url: str) -> tuple[int, int]:
    """(queries, bytes): the body is read chunk by chunk and dropped, as a server would send it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
        chunks = response.streaming_content if response.streaming else [response.content]
        size = sum(len(chunk) for chunk in chunks)
    assert response.status_code == 200, (url, response.status_code)
    return len(queries), size


def peak_rss_of(work) -> int:
    """The peak resident set (KiB) of a forked child that does `work` on its own connection."""
    from django.db import connection

    connection.close()  # the child opens its own; a shared socket would mix their messages
    pid = os.fork()
    if pid == 0:
        try:
            work()
        finally:
            os._exit(0)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def database_suffix(learners: int) -> str:
    return f"{learners // 1000}k" if learners % 1000 == 0 else str(learners)


def database_create(*, base: str, name: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="Learners per course, comma-separated.")
    parser.add_argument("--database-prefix", default="ec_bench_dash", help="Databases <prefix>_10k, <prefix>_100k.")
    parser.add_argument("--repeat", type=int, default=None, help="Requests per case (default 10, 5 from 100,000).")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Instructor dashboard timings on a generated 10,000-learner course, against PostgreSQL.

Uses its own database (`--database`, default ec_bench_dash) on the server named by DATABASE_URL:
creates and migrates it, generates the course (`manage.py generate_course_data`, 10,000 learners,
10 parts, 200,000 runs) when it is not there yet, then times, through Django's test Client as the
course's instructor: the dashboard page (all learners and one cohort) and the two CSV exports
(read to the last byte). Prints p50 and p95 per request, with the page's query count.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/dashboard.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
SLUG = "bench-generated"


def main() -> int:
    args = parse_args()
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not base.startswith("postgres"):
        print("bench/dashboard.py needs DATABASE_URL pointing at PostgreSQL", file=sys.stderr)
        return 2
    database_create(base=base, name=args.database)
    parts = urlsplit(base)
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{args.database}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ecplatform.settings.test")
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from courses.models import Course

    call_command("migrate", verbosity=0)
    course = Course.objects.filter(slug=SLUG).first()
    if course is None:
        started = time.monotonic()
        call_command(
            "generate_course_data", slug=SLUG, learners=args.learners, chapters=10, runs=args.runs, verbosity=1
        )
        print(f"generated in {time.monotonic() - started:.1f} s")
        course = Course.objects.get(slug=SLUG)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    learners = course.enrolments.count()
    runs = course.chapters.values("exercises__runs").count()
    cohort = course.cohorts.order_by("name").first()

    client = Client()
    client.force_login(course.instructors.get())
    base_url = f"/teach/{SLUG}/"
    cases = [
        ("dashboard page", base_url),
        (f"dashboard page, cohort {cohort.name!r}", f"{base_url}?cohort={cohort.pk}"),
        ("dashboard page, date range", f"{base_url}?start=2000-01-01&end=2100-01-01"),
        ("CSV learners' progress", f"{base_url}export/learners.csv"),
        ("CSV question statistics", f"{base_url}export/questions.csv"),
        ("API dashboard", f"/api/teach/courses/{SLUG}/dashboard/"),
    ]
    print(f"\ncourse {SLUG!r}: {learners} learners, {runs} runs; {args.repeat} requests each (after 1 warm-up)\n")
    print(f"{'request':<38} {'p50 ms':>9} {'p95 ms':>9} {'queries':>8} {'bytes':>10}")
    for label, url in cases:
        times = []
        for i in range(args.repeat + 1):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                body = b"".join(response.streaming_content) if response.streaming else response.content
                elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, (url, response.status_code)
            if i:
                times.append(elapsed)
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        print(f"{label:<38} {statistics.median(times):>9.1f} {p95:>9.1f} {len(queries):>8} {len(body):>10}")
    return 0


def database_create(*, base: str, name: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="ec_bench_dash")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--learners", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=200_000)
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Chapter page timings for a signed-in learner, with the rendered chapter from the cache and,
as the baseline in the same run, rendered anew on every request (the cache emptied first).

Uses a fresh SQLite database in a temporary folder, so it needs no service: migrates it, imports
the demo course, signs a learner in and requests each published chapter through Django's test
Client. Prints p50 and p95 per chapter and the ratio of the cached median to the uncached one.

    .venv/bin/python bench/chapter_page.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    args = parse_args()
    var = tempfile.mkdtemp(prefix="ec-bench-page-")
    os.environ.update(
        VAR_DIR=var, DATABASE_URL=f"sqlite:///{var}/db.sqlite3", DJANGO_SETTINGS_MODULE="ecplatform.settings.test"
    )
    sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    from accounts.services import user_create
    from courses.models import Chapter
    from courses.services.content_io import course_import

    call_command("migrate", verbosity=0)
    course = course_import(path=ROOT / "courses" / "content" / "transformers").course
    client = Client()
    client.force_login(user_create(username="bench-learner", password="a long pass phrase"))
    chapters = Chapter.objects.filter(course=course, published=True).order_by("number")

    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(f"\n{args.repeat} requests per chapter and mode (after 1 warm-up); cache: {backend}\n")
    print(f"{'chapter':<36} {'body KiB':>8} {'uncached p50':>13} {'p95':>7} {'cached p50':>11} {'p95':>7} {'ratio':>6}")
    for chapter in chapters:
        url = f"/courses/{course.slug}/{chapter.slug}/"
        uncached = timings(client, url, args.repeat, before=cache.clear)
        cached = timings(client, url, args.repeat, before=lambda: None)
        ratio = statistics.median(cached) / statistics.median(uncached)
        print(
            f"{chapter.title[:36]:<36} {len(chapter.body) / 1024:>8.1f} {statistics.median(uncached):>13.1f}"
            f" {p95(uncached):>7.1f} {statistics.median(cached):>11.1f} {p95(cached):>7.1f} {ratio:>6.2f}"
        )
    print("\nms per request; ratio: cached p50 / uncached p50")
    return 0


def timings(client, url: str, repeat: int, *, before) -> list[float]:
    times = []
    for i in range(repeat + 1):
        before()
        started = time.perf_counter()
        response = client.get(url)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (url, response.status_code)
        if i:
            times.append(elapsed)
    return times


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""A learner's second visit, from outside: the Review page and the History panel of a busy learner.

It starts what it measures itself (bench/run_latency.py's set-up: a fresh database, the demo
course, a learner, uvicorn), gives the learner `--attempts` runs of one exercise (1,000 by default)
and `--scheduled` quiz questions in their review (500 by default, every one due: the demo course's
questions and more added to its published parts, three choices each; 20 other learners with 50
scheduled questions each around them), then reads, `--reads` times each, p50 and p95 in ms:

- review page: `GET /courses/<slug>/review/` as the learner reads it, logged in (the due count,
  the question due longest ago with its choices);
- review API: `GET /api/courses/<id>/review/` (the same, as JSON);
- review answer: `POST /api/review/answers/` of the question the API gave (one answer per read, so
  the due count goes down by one each time: 500 due outlast 200 reads);
- history panel: `GET /api/exercises/<id>/attempts/`, the request the editor's History panel makes
  (the newest 50 of the learner's attempts);
- course page: the course outline with its due count;
- chapter page (baseline): a chapter of the course as the same learner reads it;

and each as a ratio to the chapter page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/review.py [--attempts 1000] [--scheduled 500] [--reads 200]
    .venv/bin/python bench/review.py --embedded       # SQLite, as `make run` serves
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
import json
from datetime import timedelta
from django.utils import timezone
from fsrs import Card, Rating
from accounts.models import User
from accounts.services import user_create
from courses.models import Chapter, Choice, Exercise, Question, ReviewCard
from courses.services.review import SCHEDULER
from runner.models import Run
exercise = Exercise.objects.get(pk={exercise})
course = exercise.chapter.course
learner = User.objects.get(username="bench0")
others = [user_create(username=f"other{{i}}", password="bench-pw-1") for i in range(20)]
now = timezone.now()
runs = [Run(user=learner, exercise=exercise, code=exercise.starter_code + f"\\n# attempt {{i}}\\n",
            status="failed", failure="The largest weight is still on 'the'",
            created_at=now - timedelta(minutes={attempts} - i), finished_at=now) for i in range({attempts})]
Run.objects.bulk_create(runs, batch_size=500)

chapters = list(Chapter.objects.filter(course=course, published=True).order_by("number"))
questions = list(Question.objects.filter(chapter__in=chapters).order_by("chapter__number", "position"))
n = 0
while len(questions) < {scheduled}:
    chapter = chapters[n % len(chapters)]
    n += 1
    position = 100 + n
    question = Question.objects.create(chapter=chapter, position=position, prompt=f"Bench question {{n}}: which one?")
    Choice.objects.bulk_create([
        Choice(question=question, position=p, text=f"Choice {{p}} of bench question {{n}}", is_correct=p == 2,
               explanation=f"Why choice {{p}} is {{'right' if p == 2 else 'wrong'}}.") for p in (1, 2, 3)
    ])
    questions.append(question)

def card(user, question, minutes_ago):
    at = now - timedelta(days=2, minutes=minutes_ago)
    scheduled, _ = SCHEDULER.review_card(Card(card_id=0, due=at), Rating.Again, at)
    return ReviewCard(user=user, question=question, course=course, state=scheduled.state.value, step=scheduled.step,
                      stability=scheduled.stability, difficulty=scheduled.difficulty, due=scheduled.due,
                      last_review=scheduled.last_review)

cards = [card(learner, q, i) for i, q in enumerate(questions[:{scheduled}])]
cards += [card(user, q, i) for user in others for i, q in enumerate(questions[:50])]
ReviewCard.objects.bulk_create(cards, batch_size=500)
due = ReviewCard.objects.filter(user=learner, due__lte=now).count()
chapter = exercise.chapter
print(json.dumps({{"course": course.pk, "slug": course.slug, "due": due, "exercise": exercise.pk,
                  "chapter": f"/courses/{{course.slug}}/{{chapter.slug}}/"}}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=1000, help="the learner's runs of one exercise (1000)")
    parser.add_argument("--scheduled", type=int, default=500, help="questions in the learner's review, all due (500)")
    parser.add_argument("--reads", type=int, default=200, help="reads of each page (200)")
    parser.add_argument("--embedded", action="store_true", help="SQLite in a folder of its own, as `make run`")
    parser.add_argument("--database", default="ec_bench_review", help="database to (re)create for the benchmark")
    args = parser.parse_args()
    if args.reads >= args.scheduled:
        parser.error("--reads must stay under --scheduled: each read answers one due question")
    chosen = bench_from_env(embedded=args.embedded, database=args.database, prefix="review-bench-")
    if chosen is None:
        print("bench/review.py needs DATABASE_URL (PostgreSQL), or --embedded", file=sys.stderr)
        return 2
    bench, setup = chosen
    try:
        bench.prepare(learners=1)
        script = SETUP.format(exercise=bench.exercise_id, attempts=args.attempts, scheduled=args.scheduled)
        made = json.loads(bench._manage("shell", "-c", script, capture=True).strip().splitlines()[-1])
        assert made["due"] == args.scheduled, made
        figures = measure(bench, made, reads=args.reads)
    finally:
        bench.close(keep_db=False)
    report(figures, setup=setup, attempts=args.attempts, scheduled=args.scheduled, reads=args.reads)
    return 0


def measure(bench: Bench, made: dict, *, reads: int) -> dict[str, list[float]]:
    api = bench._session()
    api.headers["Authorization"] = f"Token {bench.tokens[0]}"
    browser = learner_browser(bench.web_url)
    state_url = f"{bench.web_url}/api/courses/{made['course']}/review/"
    answer_url = f"{bench.web_url}/api/review/answers/"
    pages = {
        "review page": (browser, f"{bench.web_url}/courses/{made['slug']}/review/"),
        "review API": (api, state_url),
        "history panel": (api, f"{bench.web_url}/api/exercises/{made['exercise']}/attempts/"),
        "course page": (browser, f"{bench.web_url}/courses/{made['slug']}/"),
        "chapter page (baseline)": (browser, f"{bench.web_url}{made['chapter']}"),
    }
    first = api.get(state_url, timeout=30).json()
    assert first["due"] == made["due"] and first["question"] is not None, first
    assert f"{made['due']} questions due" in browser.get(pages["review page"][1], timeout=30).text
    figures: dict[str, list[float]] = {name: [] for name in [*pages, "review answer"]}
    for _ in range(reads):
        for name, (session, url) in pages.items():  # interleaved, so drift touches each alike
            started = time.perf_counter()
            response = session.get(url, timeout=30)
            figures[name].append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
        question = api.get(state_url, timeout=30).json()["question"]
        payload = {"question": question["id"], "choice": question["choices"][0]["id"]}
        started = time.perf_counter()
        response = api.post(answer_url, json=payload, timeout=30)
        figures["review answer"].append((time.perf_counter() - started) * 1000)
        assert response.status_code == 201, response.text
    left = api.get(state_url, timeout=30).json()["due"]
    assert left == made["due"] - reads, (left, made["due"], reads)
    return figures


def report(figures: dict[str, list[float]], *, setup: str, attempts: int, scheduled: int, reads: int) -> None:
    baseline = statistics.median(figures["chapter page (baseline)"])
    print(f"\n{setup}: a learner with {attempts} attempts and {scheduled} questions due, {reads} reads of each")
    print(f"{'':26} {'p50 ms':>8} {'p95 ms':>8} {'p50 / chapter':>14}")
    for name, values in figures.items():
        p50 = statistics.median(values)
        print(f"{name:26} {p50:8.1f} {percentile(values, 0.95):8.1f} {p50 / baseline:14.2f}")


if __name__ == "__main__":
    sys.exit(main())

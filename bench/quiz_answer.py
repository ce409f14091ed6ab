#!/usr/bin/env python
"""A quiz answer from outside: `POST /api/quiz/answers/` to its response, through the ASGI web app.

It starts what it measures itself (bench/run_latency.py's set-up: a fresh PostgreSQL database, the
demo course, learners with API tokens, uvicorn), enrols the learners and puts them in a cohort (so
each answer counts in the course's and a cohort's figures, as in a class), then each learner in
turn takes Part 1's quiz: every question answered wrong once, then right (the last right answer
finishes the quiz, which changes the learner's progress). It prints, p50 and p95 in ms:

- answer: the POST, to its response (what the learner waits for);
- quiz read: `GET /api/chapters/<id>/quiz/` by the same learner before each answer, the baseline
  (a request through the same stack that writes nothing), and answer / read;
- counted after: from the answer's response until the dashboards have counted it (its note,
  teaching.services.outbox, is gone), polled every millisecond from outside.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/easycompilers REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/quiz_answer.py [--learners 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_latency import Bench, percentile

SETUP = """
import json
from courses.models import Chapter, Enrolment
from teaching.models import Cohort
from accounts.models import User
chapter = Chapter.objects.filter(questions__isnull=False).order_by("course_id", "number").first()
users = User.objects.filter(username__startswith="bench")
cohort = Cohort.objects.create(course=chapter.course, name="Bench class", invite_code="bench-class")
for user in users:
    Enrolment.objects.create(user=user, course=chapter.course)
    cohort.members.add(user)
questions = [
    {"id": q.pk, "wrong": q.choices.filter(is_correct=False).first().pk, "right": q.choices.get(is_correct=True).pk}
    for q in chapter.questions.order_by("position")
]
print(json.dumps({"chapter": chapter.pk, "questions": questions}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=20, help="learners, each taking the quiz once (20)")
    parser.add_argument("--database", default="ec_bench_quiz", help="database to (re)create for the benchmark")
    args = parser.parse_args()
    if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        print("bench/quiz_answer.py needs DATABASE_URL (PostgreSQL) and REDIS_URL", file=sys.stderr)
        return 2
    logs = Path(tempfile.mkdtemp(prefix="quiz-bench-"))
    bench = Bench(
        database_url=os.environ["DATABASE_URL"], redis_url=os.environ["REDIS_URL"], database=args.database, logs=logs
    )
    try:
        bench.prepare(learners=args.learners)
        quiz = json.loads(bench._manage("shell", "-c", SETUP, capture=True).strip().splitlines()[-1])
        answers, reads, counted_after = measure(bench, quiz)
    finally:
        bench.close(keep_db=False)
    report(answers, reads, counted_after, learners=args.learners, questions=len(quiz["questions"]))
    return 0


def measure(bench: Bench, quiz: dict) -> tuple[list[float], list[float], list[float]]:
    import psycopg

    answers, reads, counted_after = [], [], []
    with psycopg.connect(bench.database_url, autocommit=True) as db:
        notes = db.execute("SELECT to_regclass('teaching_answertocount') IS NOT NULL").fetchone()[0]
        for token in bench.tokens:
            session = bench._session()
            session.headers["Authorization"] = f"Token {token}"
            for question in quiz["questions"]:
                for choice in (question["wrong"], question["right"]):
                    started = time.perf_counter()
                    read = session.get(f"{bench.web_url}/api/chapters/{quiz['chapter']}/quiz/", timeout=30)
                    reads.append((time.perf_counter() - started) * 1000)
                    read.raise_for_status()
                    started = time.perf_counter()
                    response = session.post(
                        f"{bench.web_url}/api/quiz/answers/",
                        json={"question": question["id"], "choice": choice},
                        timeout=30,
                    )
                    answered = time.perf_counter()
                    answers.append((answered - started) * 1000)
                    response.raise_for_status()
                    if notes:
                        while db.execute("SELECT EXISTS (SELECT 1 FROM teaching_answertocount)").fetchone()[0]:
                            time.sleep(0.001)
                        counted_after.append((time.perf_counter() - answered) * 1000)
    return answers, reads, counted_after


def report(answers: list[float], reads: list[float], counted_after: list[float], *, learners: int, questions: int):
    def figures(values: list[float]) -> str:
        return f"{statistics.median(values):8.1f} {percentile(values, 0.95):8.1f}"

    print(f"\n{learners} learners x {questions} questions, each answered wrong then right ({len(answers)} answers)")
    print(f"{'':24} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"{'answer':24} {figures(answers)}")
    print(f"{'quiz read (baseline)':24} {figures(reads)}")
    print(f"{'answer / read':24} {statistics.median(answers) / statistics.median(reads):8.2f}")
    if counted_after:
        print(f"{'counted after response':24} {figures(counted_after)}")
    else:
        print("counted after response: in the answer's own transaction (no outbox in this tree)")


if __name__ == "__main__":
    sys.exit(main())

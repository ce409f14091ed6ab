"""A large made-up course with learners, quiz answers and runs, for the dashboards' benchmark and
for trying the dashboards by hand (`manage.py generate_course_data`).

Learners reach fewer parts the further the course goes (a funnel), miss some questions at the
first try, and run each exercise a few times before it passes, with the errors, time-outs and
memory stops real runs have. The dashboards' summaries are made beside the rows they count (the
same builders as teaching.services.rollups' rebuild). Rows are written in batches, by COPY on
PostgreSQL (teaching.services.bulk); nothing here is used by the platform itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import random
import uuid
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone

from courses.models import (
    Chapter,
    ChapterProgress,
    Choice,
    Course,
    CourseModule,
    Enrolment,
    Exercise,
    ExerciseState,
    Question,
    QuizAnswer,
)
from courses.services.content_io import CourseSpec
from runner.models import Run
from teaching.models import Cohort, CohortMembership
from teaching.services import course_counts, rollups, standings
from teaching.services.bulk import BATCH, RowWriter, analyze

User = get_user_model()
QUESTIONS_PER_CHAPTER = 5
CHOICES_PER_QUESTION = 4
EXERCISES_PER_CHAPTER = 2
RUNS_PER_LEARNER = 20
COHORTS = ("Monday group", "Wednesday group", "Evening class", "Self-paced")
ERRORS = ("NameError", "TypeError", "ValueError", "IndexError", "RuntimeError", "AssertionError")
LEARNER_PASSWORD = "learner-password"  # noqa: S105 - made-up accounts for a local benchmark
INSTRUCTOR_PASSWORD = "instructor-password"  # noqa: S105


@dataclass(frozen=True)
class GeneratedCourse:
    course: Course
    instructor: User
    learners: int
    runs: int
    answers: int


@contextlib.contextmanager
def _timestamps_as_given():
    """bulk_create fills auto_now/auto_now_add fields with the present; the data needs its past."""
    fields = [
        Enrolment._meta.get_field("enrolled_at"),
        Enrolment._meta.get_field("last_seen_at"),
        QuizAnswer._meta.get_field("answered_at"),
        CohortMembership._meta.get_field("joined_at"),
    ]
    saved = [(f, f.auto_now, f.auto_now_add) for f in fields]
    for f in fields:
        f.auto_now = f.auto_now_add = False
    try:
        yield
    finally:
        for f, auto_now, auto_now_add in saved:
            f.auto_now, f.auto_now_add = auto_now, auto_now_add


def course_data_generate(
    *,
    slug: str,
    learners: int = 10_000,
    chapters: int = 10,
    runs: int | None = None,
    seed: int = 1,
    like: CourseSpec | None = None,
    log=None,
) -> GeneratedCourse:
    """`like`: a course read from its folder (content_io.course_read) whose shape the generated
    course takes: its published parts, their titles, exercises and questions, so the dashboards
    show what the real course holds; else `chapters` made-up parts. `runs`: RUNS_PER_LEARNER per
    learner unless given."""
    runs = learners * RUNS_PER_LEARNER if runs is None else runs
    rng = random.Random(seed)  # noqa: S311 - made-up data, repeatable by seed
    now = timezone.now()
    say = log or (lambda message: None)
    with transaction.atomic(), _timestamps_as_given():
        course = Course.objects.create(slug=slug, title=f"Generated course {slug}", published=True)
        instructor = User.objects.create(
            username=f"{slug}-instructor", role=User.Role.INSTRUCTOR, password=make_password(INSTRUCTOR_PASSWORD)
        )
        course.instructors.add(instructor)
        parts, questions, exercises = (
            _content_like(course=course, spec=like) if like else _content(course=course, chapters=chapters)
        )
        cohorts = [
            Cohort.objects.create(course=course, name=name, invite_code=f"{slug}-{i}", created_by=instructor)
            for i, name in enumerate(COHORTS)
        ]
        say(f"content: {len(parts)} parts, {len(questions)} questions, {len(exercises)} exercises")

        password = make_password(LEARNER_PASSWORD)
        users = User.objects.bulk_create(
            [
                User(username=f"{slug}-learner-{i:05d}", role=User.Role.LEARNER, password=password)
                for i in range(learners)
            ],
            batch_size=BATCH,
        )
        say(f"{len(users)} learners")
        depths = [_depth(rng=rng, parts=len(parts)) for _ in users]
        started = [i for i, depth in enumerate(depths) if depth]
        budgets = [0] * len(users)
        for i, budget in zip(started, _run_budgets(rng=rng, learners=len(started), runs=runs), strict=True):
            budgets[i] = budget
        difficulty = {q.pk: rng.uniform(0.35, 0.9) for q, _ in questions}
        exercise_pass = {e.pk: rng.uniform(0.5, 0.95) for e in exercises}
        by_part: dict[int, list] = {}
        for question, choices in questions:
            by_part.setdefault(question.chapter_id, []).append((question, choices))
        writer = RowWriter()
        for index, user in enumerate(users):
            _learner(
                rng=rng,
                now=now,
                writer=writer,
                user=user,
                course=course,
                cohort=cohorts[index % len(cohorts)],
                parts=parts,
                questions=by_part,
                exercises=exercises,
                difficulty=difficulty,
                exercise_pass=exercise_pass,
                budget=budgets[index],
                depth=depths[index],
            )
        writer.flush()
    analyze(writer.written)
    course_counts.course_counts_rebuild(course=course)
    standings.standings_rebuild(course=course)
    return GeneratedCourse(
        course=course,
        instructor=instructor,
        learners=learners,
        runs=writer.written.get(Run, 0),
        answers=writer.written.get(QuizAnswer, 0),
    )


def _content(*, course: Course, chapters: int):
    parts = [
        Chapter(course=course, number=n, slug=f"part-{n}", title=f"Part {n} of the generated course", published=True)
        for n in range(1, chapters + 1)
    ]
    for part in parts:
        part.reading_minutes = 5
    parts = Chapter.objects.bulk_create(parts)
    questions = Question.objects.bulk_create(
        [
            Question(chapter=part, position=p, prompt=f"Part {part.number}, question {p}: which is right?")
            for part in parts
            for p in range(1, QUESTIONS_PER_CHAPTER + 1)
        ]
    )
    choices = Choice.objects.bulk_create(
        [
            Choice(
                question=q,
                position=c,
                text=f"Answer {'ABCD'[c - 1]}",
                is_correct=c == 1 + q.pk % CHOICES_PER_QUESTION,
                explanation="" if c == 1 + q.pk % CHOICES_PER_QUESTION else "Not this one.",
            )
            for q in questions
            for c in range(1, CHOICES_PER_QUESTION + 1)
        ]
    )
    by_question: dict[int, list[Choice]] = {}
    for choice in choices:
        by_question.setdefault(choice.question_id, []).append(choice)
    exercises = Exercise.objects.bulk_create(
        [
            Exercise(chapter=part, slug=f"exercise-{part.number}-{e}", position=e, title=f"Exercise {part.number}.{e}")
            for part in parts
            for e in range(1, EXERCISES_PER_CHAPTER + 1)
        ]
    )
    return parts, [(q, by_question[q.pk]) for q in questions], exercises


def _content_like(*, course: Course, spec: CourseSpec):
    """The parts, questions (with their choices) and exercises of `spec`'s published chapters."""
    published = [chapter for chapter in spec.chapters if chapter.published]
    parts = Chapter.objects.bulk_create(
        [
            Chapter(
                course=course,
                number=c.number,
                slug=c.slug,
                title=c.title,
                summary=c.summary,
                published=True,
                reading_minutes=5,
            )
            for c in published
        ]
    )
    by_slug = {part.slug: part for part in parts}
    questions, choices = [], []
    for c in published:
        for position, q in enumerate(c.questions, start=1):
            question = Question(chapter=by_slug[c.slug], position=position, prompt=q.prompt)
            questions.append(question)
            choices.append(q.choices)
    questions = Question.objects.bulk_create(questions)
    made = Choice.objects.bulk_create(
        [
            Choice(
                question=q, position=n, text=choice.text, is_correct=choice.is_correct, explanation=choice.explanation
            )
            for q, specs in zip(questions, choices, strict=True)
            for n, choice in enumerate(specs, start=1)
        ]
    )
    by_question: dict[int, list[Choice]] = {}
    for choice in made:
        by_question.setdefault(choice.question_id, []).append(choice)
    # The exercises' code and the course's modules too: a run of a generated learner reads what a
    # run of the real course does (their own module, part by part).
    exercises = Exercise.objects.bulk_create(
        [
            Exercise(
                chapter=by_slug[c.slug],
                slug=e.slug,
                position=n,
                title=e.title,
                starter_code=e.starter_code,
                check_code=e.check_code,
                probe_code=e.probe_code,
            )
            for c in published
            for n, e in enumerate(c.exercises, start=1)
        ]
    )
    CourseModule.objects.bulk_create([CourseModule(course=course, name=m.name, source=m.source) for m in spec.modules])
    return parts, [(q, by_question[q.pk]) for q in questions], exercises


def _run_budgets(*, rng: random.Random, learners: int, runs: int) -> list[int]:
    """Runs per learner: uneven, summing to exactly `runs`."""
    if not learners:
        return []
    mean = runs / learners
    budgets = [max(0, round(rng.expovariate(1 / mean))) if mean else 0 for _ in range(learners)]
    diff = runs - sum(budgets)
    while diff:
        i = rng.randrange(learners)
        step = 1 if diff > 0 else -1
        if budgets[i] + step >= 0:
            budgets[i] += step
            diff -= step
    return budgets


def _depth(*, rng: random.Random, parts: int) -> int:
    """How far a learner got: each part loses some learners (the funnel)."""
    depth = 0
    while depth < parts and rng.random() < (0.93 if depth == 0 else 0.8):
        depth += 1
    return depth


def _put(writer: RowWriter, model, values: dict, json_fields: tuple[str, ...] = ()) -> None:
    """The biggest tables go to COPY as plain values on PostgreSQL (making a model instance per
    row cost more than writing it); elsewhere as model instances."""
    if writer.copies:
        for name in json_fields:
            values[name] = json.dumps(values[name])
        writer.add_values(model, values)
    else:
        writer.add(model(**values))


def _learner(
    *, rng, now, writer, user, course, cohort, parts, questions, exercises, difficulty, exercise_pass, budget, depth
) -> None:
    enrolled = now - dt.timedelta(days=rng.uniform(1, 90))
    seen = enrolled + (now - enrolled) * rng.random()
    writer.add(Enrolment(user=user, course=course, enrolled_at=enrolled, last_seen_at=seen, last_chapter=None))
    writer.add(CohortMembership(cohort=cohort, user=user, joined_at=enrolled))
    if depth == 0:
        return
    span = seen - enrolled
    reached = parts[:depth]
    # The last part reached is done with probability one half; earlier ones are done.
    last_done = rng.random() < 0.5
    clock = enrolled
    step = span / (depth * 12 + 1)
    reached_ids = {p.pk for p in reached}
    reached_exercises = [e for e in exercises if e.chapter_id in reached_ids]
    shares = _split(rng=rng, total=budget, parts=len(reached_exercises))
    run_share = dict(zip([e.pk for e in reached_exercises], shares, strict=True))
    for part in reached:
        done = part is not reached[-1] or last_done
        right_first = 0
        answers: list[rollups.AnswerFacts] = []
        for question, choices in questions.get(part.pk, ()):
            wrong = [c for c in choices if not c.is_correct]
            right = next(c for c in choices if c.is_correct)
            attempt = 1
            # The commonest wrong answer is each question's first wrong choice, twice as often.
            while rng.random() > difficulty[question.pk] and attempt < CHOICES_PER_QUESTION:
                clock += step / 5
                pick = wrong[0] if rng.random() < 0.5 else rng.choice(wrong)
                answers.append(
                    _answer(
                        writer=writer, user=user, part=part, question=question, choice=pick, attempt=attempt, at=clock
                    )
                )
                attempt += 1
            clock += step / 5
            answers.append(
                _answer(writer=writer, user=user, part=part, question=question, choice=right, attempt=attempt, at=clock)
            )
            right_first += attempt == 1
        for summary in rollups.chapter_summaries_build(course_id=course.pk, answers=answers):
            writer.add(summary)
        quiz_at = clock
        for exercise in (e for e in reached_exercises if e.chapter_id == part.pk):
            count = run_share[exercise.pk]
            passes = count > 0 and (done or rng.random() < exercise_pass[exercise.pk])
            runs = []
            for n in range(count):
                clock += step / max(count, 1)
                runs.append(
                    _run(
                        rng=rng, writer=writer, user=user, exercise=exercise, at=clock, passed=passes and n == count - 1
                    )
                )
            summaries, errors = rollups.exercise_summaries_build(course_id=course.pk, runs=runs)
            for row in (*summaries, *errors):
                writer.add(row)
            if passes:
                writer.add(ExerciseState(user=user, exercise=exercise, passed_at=clock, code="# passed"))
            elif done:
                done = False  # it cannot be complete without this exercise
        writer.add(
            ChapterProgress(
                user=user,
                chapter=part,
                quiz_finished_at=quiz_at,
                quiz_score=right_first,
                completed_at=clock if done else None,
            )
        )


def _answer(*, writer, user, part, question, choice, attempt: int, at) -> rollups.AnswerFacts:
    values = {
        "user_id": user.pk,
        "question_id": question.pk,
        "choice_id": choice.pk,
        "is_correct": choice.is_correct,
        "attempt": attempt,
        "answered_at": at,
    }
    _put(writer, QuizAnswer, values)
    return rollups.AnswerFacts(
        user_id=user.pk, chapter_id=part.pk, attempt=attempt, is_correct=choice.is_correct, answered_at=at
    )


def _split(*, rng: random.Random, total: int, parts: int) -> list[int]:
    if parts == 0:
        return []
    cuts = sorted(rng.randint(0, total) for _ in range(parts - 1))
    return [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]


def _run(*, rng: random.Random, writer, user, exercise, at, passed: bool) -> rollups.RunFacts:
    duration = int(rng.lognormvariate(6.5, 0.6))  # about 0.7 s
    fields = {
        "status": Run.Status.SUCCEEDED,
        "check_passed": True,
        "passed": True,
        "error_name": "",
        "reason": "",
        "failure": "",
        "exit_code": 0,
    }
    limit = Run.Limit.NONE
    outputs = [{"type": "check", "passed": True, "message": "Well done."}]
    if not passed:
        roll = rng.random()
        if roll < 0.04:
            duration = 20_000
            limit = Run.Limit.TIME
            fields = {
                "status": Run.Status.TIMED_OUT,
                "check_passed": None,
                "passed": False,
                "error_name": "",
                "reason": "time limit 20 s",
                "failure": "time limit 20 s",
                "exit_code": None,
            }
            outputs = []
        elif roll < 0.06:
            limit = Run.Limit.MEMORY
            fields = {
                "status": Run.Status.ERROR,
                "check_passed": None,
                "passed": False,
                "error_name": "",
                "reason": "memory limit 2 GiB",
                "failure": "memory limit 2 GiB",
                "exit_code": None,
            }
            outputs = []
        elif roll < 0.7:
            name = ERRORS[min(int(rng.expovariate(1.2)), len(ERRORS) - 1)]
            fields = {
                "status": Run.Status.FAILED,
                "check_passed": None,
                "passed": False,
                "error_name": name,
                "reason": "",
                "failure": f"{name}: generated",
                "exit_code": 1,
            }
            outputs = [{"type": "error", "ename": name, "evalue": "generated", "traceback": [f"{name}: generated"]}]
        else:
            fields = {**fields, "check_passed": False, "passed": False, "failure": "Not yet: the shape is wrong."}
            outputs = [{"type": "check", "passed": False, "message": "Not yet: the shape is wrong."}]
    finished = at + dt.timedelta(milliseconds=duration)
    values = {
        **_RUN_DEFAULTS,
        **fields,
        "id": uuid.UUID(int=rng.getrandbits(128), version=4),
        "user_id": user.pk,
        "exercise_id": exercise.pk,
        "code": f"# {exercise.slug}\nresult = solve()\nprint(result)\n",
        "outputs": outputs,
        "limit": limit,
        "duration_ms": duration,
        "created_at": at,
        "started_at": at,
        "finished_at": finished,
    }
    _put(writer, Run, values, json_fields=("outputs",))
    return rollups.run_facts(
        user_id=user.pk,
        exercise_id=exercise.pk,
        created_at=at,
        finished_at=finished,
        status=fields["status"],
        passed=fields["passed"],
        limit=limit,
        duration_ms=duration,
        error_name=fields["error_name"],
    )


# Every other column of a generated run.
_RUN_DEFAULTS = {
    "queue": Run.Queue.CPU,
    "stdout": "result\n",
    "stderr": "",
    "cause": Run.Cause.PROGRAM,
    "backend": "generated",
    "warm": None,
    "worker": "",
    "stop_requested": False,
    "heartbeat_at": None,
}

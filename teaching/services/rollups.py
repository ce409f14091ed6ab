"""Writes for the dashboards' summaries (teaching.models): one run or answer added as it happens,
and every summary of a course rebuilt from its runs and answers.

The live writes run inside the transaction that counts the run or the answer, just after the
learner has it (teaching.services.outbox), so a summary commits or rolls back with its count. Runs
are numbered in the order they finish; a rebuild numbers them in the order they were made (for one
learner's runs of one exercise the two agree, as a learner waits for one run before the next).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F, Sum

from courses.models import Course, QuizAnswer
from runner.models import Run
from teaching.models import (
    AnswerToCount,
    ChapterSummary,
    ExerciseErrorSummary,
    ExerciseSummary,
    ProgressToCount,
    RunToCount,
    day_of,
)
from teaching.services.bulk import RowWriter, analyze
from teaching.services.course_counts import course_counts_rebuild
from teaching.services.standings import standings_rebuild


@dataclass(frozen=True)
class RunFacts:
    """What a summary needs of one finished run."""

    user_id: int
    exercise_id: int
    created_at: dt.datetime
    finished_at: dt.datetime
    passed: bool
    timed_out: bool
    memory_stop: bool
    duration_ms: int | None
    error_name: str


@dataclass(frozen=True)
class AnswerFacts:
    user_id: int
    chapter_id: int
    attempt: int
    is_correct: bool
    answered_at: dt.datetime


def _count_run(summary: ExerciseSummary, run: RunFacts) -> None:
    summary.runs += 1
    if run.passed:
        summary.passes += 1
        if summary.first_pass_number is None:
            summary.first_pass_number = summary.runs_before + summary.runs
    summary.timed_out += run.timed_out
    summary.memory_stops += run.memory_stop
    if run.duration_ms is not None:
        summary.timed_runs += 1
        summary.duration_total_ms += run.duration_ms
    summary.last_run_at = max(summary.last_run_at, run.finished_at) if summary.last_run_at else run.finished_at


def _count_answer(summary: ChapterSummary, answer: AnswerFacts) -> None:
    summary.answers += 1
    if answer.attempt == 1:
        summary.first_tries += 1
        summary.first_try_right += answer.is_correct
    if answer.is_correct and (summary.last_right_at is None or answer.answered_at > summary.last_right_at):
        summary.last_right_at = answer.answered_at


# --- As runs finish and answers are saved -----------------------------------------------------------


def exercise_summary_add_run(*, course_id: int, run: RunFacts) -> ExerciseSummary:
    """Count one finished run. Call it inside the transaction that counts it (outbox)."""
    day = day_of(run.created_at)
    key = {"user_id": run.user_id, "exercise_id": run.exercise_id}
    with transaction.atomic():
        summary = ExerciseSummary.objects.select_for_update().filter(**key, day=day).first()
        if summary is None:
            earlier = ExerciseSummary.objects.filter(**key, day__lt=day).aggregate(n=Sum("runs"))["n"] or 0
            try:
                with transaction.atomic():  # a concurrent first run of the day wins; count on its row
                    summary = ExerciseSummary.objects.create(
                        **key, course_id=course_id, day=day, runs_before=earlier, last_run_at=run.finished_at
                    )
            except IntegrityError:
                summary = ExerciseSummary.objects.select_for_update().get(**key, day=day)
        _count_run(summary, run)
        summary.save()
        if run.error_name:
            _error_count(summary=summary, error_name=run.error_name)
        # A run counted on a day before others already summarised moves their numbers on by one.
        # In one statement: moved apart, a later day whose first run passed would break the
        # summary's check (its pass's number after the runs before it) in between.
        ExerciseSummary.objects.filter(**key, day__gt=day).update(
            runs_before=F("runs_before") + 1, first_pass_number=F("first_pass_number") + 1
        )
    return summary


def _error_count(*, summary: ExerciseSummary, error_name: str) -> None:
    key = {"user_id": summary.user_id, "exercise_id": summary.exercise_id, "day": summary.day, "error_name": error_name}
    if ExerciseErrorSummary.objects.filter(**key).update(runs=F("runs") + 1):
        return
    try:
        with transaction.atomic():
            ExerciseErrorSummary.objects.create(**key, course_id=summary.course_id, runs=1)
    except IntegrityError:  # made meanwhile by a run of the same day
        ExerciseErrorSummary.objects.filter(**key).update(runs=F("runs") + 1)


def chapter_summary_add_answer(*, course_id: int, answer: AnswerFacts) -> ChapterSummary:
    """Count one saved quiz answer. Call it inside the transaction that counts it (outbox)."""
    key = {"user_id": answer.user_id, "chapter_id": answer.chapter_id, "day": day_of(answer.answered_at)}
    with transaction.atomic():
        summary = ChapterSummary.objects.select_for_update().filter(**key).first()
        if summary is None:
            try:
                with transaction.atomic():
                    summary = ChapterSummary.objects.create(**key, course_id=course_id)
            except IntegrityError:
                summary = ChapterSummary.objects.select_for_update().get(**key)
        _count_answer(summary, answer)
        summary.save()
    return summary


# --- From rows: a learner's runs of one exercise, or answers in one chapter, oldest first -------------


def exercise_summaries_build(
    *, course_id: int, runs: Iterable[RunFacts]
) -> tuple[list[ExerciseSummary], list[ExerciseErrorSummary]]:
    """The summaries of one learner's runs of one exercise, given oldest first, and their error rows."""
    summaries: list[ExerciseSummary] = []
    errors: dict[tuple, ExerciseErrorSummary] = {}
    for day, same_day in itertools.groupby(runs, key=lambda run: day_of(run.created_at)):
        before = summaries[-1].runs_before + summaries[-1].runs if summaries else 0
        summary = None
        for run in same_day:
            if summary is None:
                summary = ExerciseSummary(
                    user_id=run.user_id,
                    exercise_id=run.exercise_id,
                    course_id=course_id,
                    day=day,
                    runs_before=before,
                    last_run_at=run.finished_at,
                )
            _count_run(summary, run)
            if run.error_name:
                error = errors.get((day, run.error_name))
                if error is None:
                    error = errors[day, run.error_name] = ExerciseErrorSummary(
                        user_id=run.user_id,
                        exercise_id=run.exercise_id,
                        course_id=course_id,
                        day=day,
                        error_name=run.error_name,
                    )
                error.runs += 1
        summaries.append(summary)
    return summaries, list(errors.values())


def chapter_summaries_build(*, course_id: int, answers: Iterable[AnswerFacts]) -> list[ChapterSummary]:
    """The summaries of one learner's answers in one chapter."""
    by_day: dict[dt.date, ChapterSummary] = {}
    for answer in answers:
        day = day_of(answer.answered_at)
        summary = by_day.get(day)
        if summary is None:
            summary = by_day[day] = ChapterSummary(
                user_id=answer.user_id, chapter_id=answer.chapter_id, course_id=course_id, day=day
            )
        _count_answer(summary, answer)
    return list(by_day.values())


# What counting a run reads of its row: run_facts' arguments.
RUN_COLUMNS = (
    "user_id",
    "exercise_id",
    "created_at",
    "finished_at",
    "status",
    "passed",
    "limit",
    "duration_ms",
    "error_name",
)


def run_facts(*, user_id, exercise_id, created_at, finished_at, status, passed, limit, duration_ms, error_name):
    return RunFacts(
        user_id=user_id,
        exercise_id=exercise_id,
        created_at=created_at,
        finished_at=finished_at,
        passed=passed,
        timed_out=status == Run.Status.TIMED_OUT,
        memory_stop=limit == Run.Limit.MEMORY,
        duration_ms=duration_ms,
        error_name=error_name,
    )


def rollups_rebuild(*, course: Course, log=None) -> tuple[int, int]:
    """Replace the course's summaries with ones built from its finished runs and its answers,
    streamed in order from the database and written in bulk (COPY on PostgreSQL). Returns the
    number of exercise and chapter summaries written."""
    say = log or (lambda message: None)
    runs = (
        Run.objects.filter(exercise__chapter__course=course, status__in=Run.TERMINAL)
        .order_by("exercise_id", "user_id", "created_at", "id")
        .values_list(*RUN_COLUMNS)
    )
    answers = (
        QuizAnswer.objects.filter(question__chapter__course=course)
        .order_by("question__chapter_id", "user_id", "answered_at", "id")
        .values_list("user_id", "question__chapter_id", "attempt", "is_correct", "answered_at")
    )
    with transaction.atomic():
        # Every finished run, answer and progress row is counted below, those not counted yet too:
        # their notes go first (a counter in flight waits for this commit, then finds no note).
        RunToCount.objects.filter(run__exercise__chapter__course=course).delete()
        AnswerToCount.objects.filter(answer__question__chapter__course=course).delete()
        ProgressToCount.objects.filter(progress__chapter__course=course).delete()
        ExerciseSummary.objects.filter(course=course).delete()
        ExerciseErrorSummary.objects.filter(course=course).delete()
        ChapterSummary.objects.filter(course=course).delete()
        writer = RowWriter()
        facts = (run_facts(**dict(zip(RUN_COLUMNS, row, strict=True))) for row in runs.iterator(chunk_size=5000))
        for _, group in itertools.groupby(facts, key=lambda run: (run.exercise_id, run.user_id)):
            summaries, errors = exercise_summaries_build(course_id=course.pk, runs=group)
            for row in (*summaries, *errors):
                writer.add(row)
        writer.flush()
        say(f"{writer.written.get(ExerciseSummary, 0)} exercise summaries")
        answer_facts = (AnswerFacts(*row) for row in answers.iterator(chunk_size=5000))
        for _, group in itertools.groupby(answer_facts, key=lambda answer: (answer.chapter_id, answer.user_id)):
            for summary in chapter_summaries_build(course_id=course.pk, answers=group):
                writer.add(summary)
        writer.flush()
        say(f"{writer.written.get(ChapterSummary, 0)} chapter summaries")
        analyze((ExerciseSummary, ExerciseErrorSummary, ChapterSummary))  # the counts read them next
        say(f"{course_counts_rebuild(course=course)} exercise counts")
        say(f"{standings_rebuild(course=course)} learner standings")
    return writer.written.get(ExerciseSummary, 0), writer.written.get(ChapterSummary, 0)

"""Where each enrolled learner stands in a course (teaching.models.LearnerStanding): the
dashboard's stuck learners, with no date range, read one narrow row per learner instead of
grouping every pass, answer, completion and run summary of the course.

A standing is made with the enrolment, from what the learner already did, and then each write
recomputes what it changes from the rows it summarises (the learner's few summaries or
completions), so a repeated or concurrent call leaves the same row:
- a run finishes: the exercise the learner failed most often without a pass;
- a right answer, a first pass, a completed chapter: the latest progress (and chapters completed).
A learner who is not enrolled has no standing; one whose enrolment goes loses it with it.
"""

from __future__ import annotations

import datetime as dt

from django.db import connection, transaction
from django.db.models import Count, F, Max, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Greatest

from courses.models import ChapterProgress, Course, Enrolment, Exercise, ExerciseState
from teaching.models import ChapterSummary, ExerciseSummary, LearnerStanding


def _failing(summaries: QuerySet) -> QuerySet:
    """(user, exercise, failed): runs of exercises with runs and no pass."""
    return (
        summaries.values("user_id", "exercise_id")
        .annotate(failed=Sum(F("runs") - F("passes")), passes_=Sum("passes"))
        .filter(passes_=0, failed__gt=0)
        .values_list("user_id", "exercise_id", "failed")
    )


def _worst_first(exercise_id, chapter_number, failed) -> tuple:
    """Orders failing exercises most runs first, then the earlier chapter, then the lower id: as
    the per-learner path does."""
    return (-failed, chapter_number, exercise_id)


def _standings_of(enrolments: QuerySet, *, course: Course) -> list[LearnerStanding]:
    """The standings of a course's enrolments, read from the learners' passes, answers,
    completions and run summaries, a grouped query each."""
    standings = {
        user_id: LearnerStanding(
            enrolment_id=pk, user_id=user_id, course=course, enrolled_at=enrolled_at, progress_at=enrolled_at
        )
        for pk, user_id, enrolled_at in enrolments.values_list("pk", "user_id", "enrolled_at").iterator(
            chunk_size=10000
        )
    }
    learners = enrolments.values("user_id")

    def later(user_id: int, at) -> None:
        standing = standings.get(user_id)
        if standing is not None and at is not None and at > standing.progress_at:
            standing.progress_at = at

    passes = ExerciseState.objects.filter(
        exercise__chapter__course=course, passed_at__isnull=False, user_id__in=learners
    )
    for user_id, at in passes.values("user_id").annotate(at=Max("passed_at")).values_list("user_id", "at"):
        later(user_id, at)
    rights = ChapterSummary.objects.filter(course=course, last_right_at__isnull=False, user_id__in=learners)
    for user_id, at in rights.values("user_id").annotate(at=Max("last_right_at")).values_list("user_id", "at"):
        later(user_id, at)
    completions = ChapterProgress.objects.filter(
        chapter__course=course, completed_at__isnull=False, user_id__in=learners
    )
    for user_id, at, n in (
        completions.values("user_id").annotate(at=Max("completed_at"), n=Count("id")).values_list("user_id", "at", "n")
    ):
        later(user_id, at)
        standings[user_id].completed_chapters = n
    chapter_of = dict(Exercise.objects.filter(chapter__course=course).values_list("id", "chapter__number"))
    failing = _failing(ExerciseSummary.objects.filter(course=course, user_id__in=learners))
    for user_id, exercise_id, failed in failing.iterator(chunk_size=10000):
        standing = standings[user_id]
        mine = _worst_first(exercise_id, chapter_of[exercise_id], failed)
        theirs = _worst_first(
            standing.failing_exercise_id, chapter_of.get(standing.failing_exercise_id, 0), standing.failing_runs
        )
        if standing.failing_exercise_id is None or mine < theirs:
            standing.failing_exercise_id, standing.failing_runs = exercise_id, failed
    return list(standings.values())


def standing_enrolled(*, enrolment: Enrolment) -> None:
    """A learner enrolled: their standing, from what they did before (often nothing)."""
    enrolments = Enrolment.objects.filter(pk=enrolment.pk)
    LearnerStanding.objects.bulk_create(_standings_of(enrolments, course=enrolment.course), ignore_conflicts=True)


def standing_run_finished(*, user_id: int, course_id: int) -> None:
    """A run of the learner's finished and is summarised: their most failed exercise again, from
    their few summaries in the course (nothing changes when they are not enrolled: no standing)."""
    failing = _failing(ExerciseSummary.objects.filter(user_id=user_id, course_id=course_id)).values_list(
        "exercise_id", "exercise__chapter__number", "failed"
    )
    worst = min(failing, key=lambda row: _worst_first(*row), default=(None, None, 0))
    LearnerStanding.objects.filter(user_id=user_id, course_id=course_id).update(
        failing_exercise_id=worst[0], failing_runs=worst[2]
    )


def standing_progressed(*, user_id: int, course_id: int, at: dt.datetime, chapter_completed: bool = False) -> None:
    """The learner answered right, first passed an exercise or completed a chapter at `at`: one
    statement (nothing when they are not enrolled)."""
    changes = {"progress_at": Greatest(F("progress_at"), Value(at))}
    if chapter_completed:
        completed = ChapterProgress.objects.filter(
            user_id=OuterRef("user_id"), chapter__course_id=OuterRef("course_id"), completed_at__isnull=False
        )
        changes["completed_chapters"] = Subquery(
            completed.order_by().values("user_id").annotate(n=Count("id")).values("n")[:1]
        )
    LearnerStanding.objects.filter(user_id=user_id, course_id=course_id).update(**changes)


def standings_rebuild(*, course: Course) -> int:
    """Replace the course's standings with ones read from its enrolments and what the learners
    did. Returns the number written."""
    standings = _standings_of(Enrolment.objects.filter(course=course), course=course)
    with transaction.atomic():
        LearnerStanding.objects.filter(course=course).delete()
        LearnerStanding.objects.bulk_create(standings, batch_size=5000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {LearnerStanding._meta.db_table}")
    return len(standings)

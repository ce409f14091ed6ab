"""Where each learner stands in a course (teaching.models.LearnerStanding): the dashboard's stuck
learners, with no date range, read one row per learner instead of grouping every pass, answer,
completion and run summary of the course.

Each write recomputes what it changes from the rows it summarises (the learner's few summaries,
passes or completions), so a repeated or concurrent call leaves the same row:
- a run finishes: the exercise the learner failed most often without a pass;
- a right answer, a first pass, a completed chapter: the latest progress (and chapters completed).
"""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Max, Sum

from courses.models import ChapterProgress, Course, Exercise, ExerciseState
from teaching.models import ChapterSummary, ExerciseSummary, LearnerStanding


def _standing_for_update(*, user_id: int, course_id: int) -> LearnerStanding:
    standing = LearnerStanding.objects.select_for_update().filter(user_id=user_id, course_id=course_id).first()
    if standing is not None:
        return standing
    try:
        with transaction.atomic():  # a concurrent first write for the learner wins; use its row
            return LearnerStanding.objects.create(user_id=user_id, course_id=course_id)
    except IntegrityError:
        return LearnerStanding.objects.select_for_update().get(user_id=user_id, course_id=course_id)


def _worst_failing(summaries) -> tuple[int | None, int]:
    """(exercise, runs) of the exercise with most runs and no pass: ties go to the earlier chapter,
    then the lower exercise id, as on the dashboard's per-learner path."""
    worst = (
        summaries.values("exercise_id")
        .annotate(failed=Sum(F("runs") - F("passes")), passes_=Sum("passes"))
        .filter(passes_=0)
        .order_by("-failed", "exercise__chapter__number", "exercise_id")
        .values_list("exercise_id", "failed")
        .first()
    )
    return worst if worst else (None, 0)


def standing_run_finished(*, user_id: int, course_id: int) -> None:
    """A run of the learner's finished and is summarised: their most failed exercise again."""
    with transaction.atomic():
        standing = _standing_for_update(user_id=user_id, course_id=course_id)
        exercise_id, failed = _worst_failing(ExerciseSummary.objects.filter(user_id=user_id, course_id=course_id))
        if (standing.failing_exercise_id, standing.failing_runs) != (exercise_id, failed):
            standing.failing_exercise_id, standing.failing_runs = exercise_id, failed
            standing.save(update_fields=["failing_exercise", "failing_runs"])


def standing_progressed(*, user_id: int, course_id: int, at: dt.datetime, chapter_completed: bool = False) -> None:
    """The learner answered right, first passed an exercise or completed a chapter at `at`."""
    with transaction.atomic():
        standing = _standing_for_update(user_id=user_id, course_id=course_id)
        fields = []
        if standing.last_progress_at is None or at > standing.last_progress_at:
            standing.last_progress_at = at
            fields.append("last_progress_at")
        if chapter_completed:
            standing.completed_chapters = ChapterProgress.objects.filter(
                user_id=user_id, chapter__course_id=course_id, completed_at__isnull=False
            ).count()
            fields.append("completed_chapters")
        if fields:
            standing.save(update_fields=fields)


def standings_rebuild(*, course: Course) -> int:
    """Replace the course's standings with ones read from its passes, answers, completions and run
    summaries. Returns the number written."""
    standings: dict[int, LearnerStanding] = {}

    def of(user_id: int) -> LearnerStanding:
        if user_id not in standings:
            standings[user_id] = LearnerStanding(user_id=user_id, course=course)
        return standings[user_id]

    def later(standing: LearnerStanding, at) -> None:
        if at is not None and (standing.last_progress_at is None or at > standing.last_progress_at):
            standing.last_progress_at = at

    passes = ExerciseState.objects.filter(exercise__chapter__course=course, passed_at__isnull=False)
    for user_id, at in passes.values("user_id").annotate(at=Max("passed_at")).values_list("user_id", "at"):
        later(of(user_id), at)
    rights = ChapterSummary.objects.filter(course=course, last_right_at__isnull=False)
    for user_id, at in rights.values("user_id").annotate(at=Max("last_right_at")).values_list("user_id", "at"):
        later(of(user_id), at)
    completions = ChapterProgress.objects.filter(chapter__course=course, completed_at__isnull=False)
    for user_id, at, n in (
        completions.values("user_id").annotate(at=Max("completed_at"), n=Count("id")).values_list("user_id", "at", "n")
    ):
        later(of(user_id), at)
        of(user_id).completed_chapters = n
    chapter_of = dict(Exercise.objects.filter(chapter__course=course).values_list("id", "chapter__number"))
    failing = (
        ExerciseSummary.objects.filter(course=course)
        .values("user_id", "exercise_id")
        .annotate(failed=Sum(F("runs") - F("passes")), passes_=Sum("passes"))
        .filter(passes_=0, failed__gt=0)
        .values_list("user_id", "exercise_id", "failed")
    )
    for user_id, exercise_id, failed in failing.iterator(chunk_size=10000):
        standing = of(user_id)
        mine = (-failed, chapter_of[exercise_id], exercise_id)
        theirs = (-standing.failing_runs, chapter_of.get(standing.failing_exercise_id, 0), standing.failing_exercise_id)
        if standing.failing_exercise_id is None or mine < theirs:
            standing.failing_exercise_id, standing.failing_runs = exercise_id, failed
    with transaction.atomic():
        LearnerStanding.objects.filter(course=course).delete()
        LearnerStanding.objects.bulk_create(standings.values(), batch_size=5000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {LearnerStanding._meta.db_table}")
    return len(standings)

"""The course dashboard's learners who look stuck: many runs of one exercise without a pass, or no
progress (a first pass, a right answer, a completed chapter) for days.

The list is read from each enrolled learner's standing (teaching.models.LearnerStanding), one
narrow row per learner. With a date range narrower than the course's history, the failing runs are
the range's, grouped from the summaries of the few learners whose standing has that many failing
runs in all, and progress is as of the range's end: the standing's, but for learners who made
progress since (after a range that ended before today), whose latest progress before the end is
grouped from their own passes, answers and completions.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL

from courses.models import Chapter, ChapterProgress, Course, Exercise, ExerciseState
from teaching.models import ChapterSummary, CohortMembership, ExerciseSummary, LearnerStanding
from teaching.selectors.filters import (
    DashboardFilters,
    as_datetime,
    exercise_ids_of,
    reads_whole_history,
    stuck_failed_runs,
    stuck_idle_days,
    summaries_of,
    with_tables,
)


@dataclass(frozen=True)
class StuckLearner:
    user_id: int
    username: str
    last_progress_at: dt.datetime | None
    failed_runs: int
    failed_exercise: str
    reasons: list[str]


def _failing_runs_by_exercise(*, course: Course, filters: DashboardFilters) -> QuerySet:
    """(user, exercise, failed): at least stuck_failed_runs() runs of the exercise in the range
    whose check did not pass, for anyone (the caller leaves out exercises the learner passed,
    once per row here, and joins the rows to the counted learners)."""
    return (
        summaries_of(ExerciseSummary, course=course, filters=filters)
        .values("user_id", "exercise_id")
        .annotate(failed=Sum(F("runs") - F("passes")))
        .filter(failed__gte=stuck_failed_runs())
    )


def _per_learner_progress(*, course: Course, filters: DashboardFilters) -> dict[str, QuerySet]:
    """Per learner, one grouped query each: the latest pass, right answer and completed chapter
    in the course up to the end of the range (`at`), and the chapters completed in all (`n`)."""

    def until_end(when: str) -> Q:
        return Q(**{f"{when}__lt": filters.end_before}) if filters.end_before else Q()

    def latest(queryset: QuerySet, when: str) -> QuerySet:
        return queryset.filter(until_end(when)).exclude(**{when: None}).values("user_id").annotate(at=Max(when))

    return {
        "last_passes": latest(
            ExerciseState.objects.filter(exercise_id__in=exercise_ids_of(course=course)), "passed_at"
        ),
        "rights": latest(ChapterSummary.objects.filter(course=course), "last_right_at"),
        "completions": ChapterProgress.objects.filter(chapter__course=course)
        .exclude(completed_at=None)
        .values("user_id")
        .annotate(at=Max("completed_at", filter=until_end("completed_at")), n=Count("id")),
    }


# Each learner's failing exercises in order, worst first (n = 1), from `failing` (user, exercise,
# failed runs in the range) less the exercises they passed (`passes`).
_WORST_SQL = """
worst AS (
    SELECT failing.user_id, failing.exercise_id, failing.failed, exercises.title,
           ROW_NUMBER() OVER (
               PARTITION BY failing.user_id ORDER BY failing.failed DESC, exercises.chapter__number, failing.exercise_id
           ) AS n
    FROM failing JOIN exercises ON exercises.id = failing.exercise_id
    WHERE NOT EXISTS (
        SELECT 1 FROM passes WHERE passes.user_id = failing.user_id AND passes.exercise_id = failing.exercise_id
    )
),
"""
# The same list from each enrolled learner's standing (teaching.models.LearnerStanding), with no
# date range or one that reaches today: the rows are counted and ordered on the one table, and only
# the listed learners' names and exercises are joined. `stuck` is each learner's row, with their
# failing exercise and its failed runs (none below the threshold), idle or not.
_STUCK_LISTED_SQL = """
listed AS (
    SELECT stuck.*, COUNT(*) OVER () AS total
    FROM stuck
    WHERE idle OR failed IS NOT NULL
    ORDER BY failed IS NULL, progress_at, user_id
    LIMIT %s
)
SELECT listed.user_id, users.username, progress_at, idle, COALESCE(failed, 0),
       COALESCE(CASE WHEN failed IS NOT NULL THEN exercises.title END, ''), total
FROM listed
JOIN users ON users.id = listed.user_id
LEFT JOIN exercises ON exercises.id = listed.failing_exercise_id
ORDER BY failed IS NULL, progress_at, listed.user_id
"""
_STUCK_FROM_STANDINGS_SQL = "".join(
    (
        """,
stuck AS (
    SELECT user_id, progress_at, failing_exercise_id,
           CASE WHEN failing_runs >= %s AND failing_exercise_id IS NOT NULL THEN failing_runs END AS failed,
           (progress_at < %s AND completed_chapters < (SELECT COUNT(*) FROM chapters)) AS idle
    FROM standings
),""",
        _STUCK_LISTED_SQL,
    )
)
# With a date range: the failing runs are the range's, and progress is as of its end. Only learners
# whose standing has as many failing runs in all can have them in the range (`failing`, grouped
# from their summaries in the range). A standing's latest progress is the learner's as of the
# range's end when it came before the end; only learners who made progress since (`later`, after a
# range that ended before today) have theirs grouped from their own passes, right answers and
# completions up to the end.
_STUCK_IN_RANGE_SQL = "".join(
    (
        """,
progress AS (
    SELECT standings.user_id, completed_chapters,
           CASE WHEN later.user_id IS NULL THEN standings.progress_at
                ELSE {greatest}(later.enrolled_at, COALESCE(last_passes.at, later.enrolled_at),
                                COALESCE(rights.at, later.enrolled_at), COALESCE(completions.at, later.enrolled_at))
           END AS progress_at
    FROM standings
    LEFT JOIN later ON later.user_id = standings.user_id
    LEFT JOIN last_passes ON last_passes.user_id = standings.user_id
    LEFT JOIN rights ON rights.user_id = standings.user_id
    LEFT JOIN completions ON completions.user_id = standings.user_id
),""",
        _WORST_SQL,
        """stuck AS (
    SELECT progress.user_id, progress_at, worst.exercise_id AS failing_exercise_id, worst.failed,
           (progress_at < %s AND completed_chapters < (SELECT COUNT(*) FROM chapters)) AS idle
    FROM progress LEFT JOIN worst ON worst.user_id = progress.user_id AND worst.n = 1
),""",
        _STUCK_LISTED_SQL,
    )
)


def stuck_learner_list(
    *, course: Course, filters: DashboardFilters, limit: int, whole_history: bool | None = None
) -> tuple[list[StuckLearner], int]:
    """Learners who look stuck, those with failing runs first, then longest without progress, and
    how many there are in all, in one query from the learners' standings (see the module). A caller
    that knows whether the range leaves nothing out (`reads_whole_history`) says so in `whole_history`."""
    if whole_history is None:
        whole_history = reads_whole_history(course=course, filters=filters)
    if whole_history:
        return _stuck_from_standings(course=course, filters=filters, limit=limit)
    return _stuck_in_range(course=course, filters=filters, limit=limit)


def _greatest() -> str:
    return "GREATEST" if connection.vendor == "postgresql" else "MAX"


def _idle_since(filters: DashboardFilters):
    idle_since = filters.reference_time() - dt.timedelta(days=stuck_idle_days())
    return connection.ops.adapt_datetimefield_value(idle_since)


def _standings(*, course: Course, filters: DashboardFilters) -> QuerySet[LearnerStanding]:
    standings = LearnerStanding.objects.filter(course=course)
    if filters.cohort is not None:
        standings = standings.filter(
            user_id__in=CohortMembership.objects.filter(cohort=filters.cohort).values("user_id")
        )
    if filters.end_before is not None:  # a range that reaches today may still end in the future
        standings = standings.filter(enrolled_at__lt=filters.end_before)
    return standings


def _listed_tables(*, course: Course) -> dict[str, QuerySet]:
    return {
        "chapters": Chapter.objects.filter(course=course).values("id"),
        "users": get_user_model().objects.values("id", "username"),
        "exercises": Exercise.objects.filter(chapter__course=course).values("id", "title", "chapter__number"),
    }


def _stuck_from_standings(*, course: Course, filters: DashboardFilters, limit: int):
    standings = _standings(course=course, filters=filters)
    sql, params = with_tables(
        _STUCK_FROM_STANDINGS_SQL,
        standings=standings.values(
            "user_id", "progress_at", "completed_chapters", "failing_runs", "failing_exercise_id"
        ),
        **_listed_tables(course=course),
    )
    return _stuck_rows(sql, [*params, stuck_failed_runs(), _idle_since(filters), limit])


def _stuck_in_range(*, course: Course, filters: DashboardFilters, limit: int):
    standings = _standings(course=course, filters=filters)
    candidates = standings.filter(failing_runs__gte=stuck_failed_runs()).values("user_id")
    # Learners who made progress after the range's end (none for a range that reaches today).
    end = filters.end_before or dt.datetime.max.replace(tzinfo=dt.UTC)
    later = standings.filter(progress_at__gte=end).values("user_id", "enrolled_at")
    in_later = {"user_id__in": RawSQL("SELECT user_id FROM later", ())}
    sql, params = with_tables(
        _STUCK_IN_RANGE_SQL.format(greatest=_greatest()),
        later=later,
        standings=standings.values("user_id", "progress_at", "completed_chapters"),
        failing=_failing_runs_by_exercise(course=course, filters=filters).filter(user_id__in=candidates),
        passes=ExerciseState.objects.filter(exercise_id__in=exercise_ids_of(course=course), user_id__in=candidates)
        .exclude(passed_at=None)
        .values("user_id", "exercise_id"),
        **{
            name: rows.filter(**in_later)
            for name, rows in _per_learner_progress(course=course, filters=filters).items()
        },
        **_listed_tables(course=course),
    )
    return _stuck_rows(sql, [*params, _idle_since(filters), limit])


def _stuck_rows(sql: str, params: list) -> tuple[list[StuckLearner], int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    stuck = []
    for user_id, username, last_progress_at, idle, failed_runs, failed_exercise, _ in rows:
        reasons = []
        if failed_runs:
            reasons.append(f"{failed_runs} runs of “{failed_exercise}” without a pass")
        if idle:
            reasons.append(f"no progress for {stuck_idle_days()}+ days")
        stuck.append(
            StuckLearner(
                user_id=user_id,
                username=username,
                last_progress_at=as_datetime(last_progress_at),
                failed_runs=failed_runs,
                failed_exercise=failed_exercise,
                reasons=reasons,
            )
        )
    return stuck, rows[0][-1] if rows else 0

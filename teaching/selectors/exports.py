"""Rows for the CSV exports, streamed: one row per counted learner, one per quiz question."""

from __future__ import annotations

from django.db import connection
from django.db.models import Count, F, QuerySet, Sum

from courses.models import ChapterProgress, Course, ExerciseState
from teaching.models import ChapterSummary, ExerciseSummary
from teaching.selectors.filters import (
    DashboardFilters,
    as_datetime,
    enrolments_of,
    exercise_ids_of,
    summaries_of,
    with_tables,
)
from teaching.selectors.questions import question_stats_list

LEARNER_CSV_HEADER = [
    "learner_id",
    "username",
    "email",
    "enrolled_at",
    "last_seen_at",
    "chapters_completed",
    "exercises_passed",
    "quiz_answers",
    "quiz_first_try_right",
    "runs",
    "runs_not_passed",
]


_LEARNER_PROGRESS_SQL = """
SELECT learners.user_id, learners.user__username, learners.user__email, learners.enrolled_at, learners.last_seen_at,
       COALESCE(completions.n, 0), COALESCE(passes.n, 0), COALESCE(answers.n, 0), COALESCE(answers.first_try_right, 0),
       COALESCE(runs.n, 0), COALESCE(runs.not_passed, 0)
FROM learners
LEFT JOIN completions ON completions.user_id = learners.user_id
LEFT JOIN passes ON passes.user_id = learners.user_id
LEFT JOIN answers ON answers.user_id = learners.user_id
LEFT JOIN runs ON runs.user_id = learners.user_id
ORDER BY learners.user__username
"""


def learner_progress_rows(*, course: Course, filters: DashboardFilters, chunk_size: int = 2000):
    """One tuple per counted learner (LEARNER_CSV_HEADER), read from a server-side cursor in
    chunks so an export of any size holds one chunk in memory. Each count is grouped by learner
    once over the course (runs and answers from their summaries) and joined to the learners."""

    def per_learner(queryset: QuerySet, **counts) -> QuerySet:
        return queryset.values("user_id").annotate(n=Count("id"), **counts)

    sql, params = with_tables(
        _LEARNER_PROGRESS_SQL,
        learners=enrolments_of(course=course, filters=filters).values(
            "user_id", "user__username", "user__email", "enrolled_at", "last_seen_at"
        ),
        completions=per_learner(
            ChapterProgress.objects.filter(
                filters.in_range("completed_at"), chapter__course=course, completed_at__isnull=False
            )
        ),
        passes=per_learner(
            ExerciseState.objects.filter(
                filters.in_range("passed_at"), exercise_id__in=exercise_ids_of(course=course), passed_at__isnull=False
            )
        ),
        answers=summaries_of(ChapterSummary, course=course, filters=filters)
        .values("user_id")
        .annotate(n=Sum("answers"), first_try_right=Sum("first_try_right")),
        runs=summaries_of(ExerciseSummary, course=course, filters=filters)
        .values("user_id")
        .annotate(n=Sum("runs"), not_passed=Sum(F("runs") - F("passes"))),
    )
    # A server-side cursor on PostgreSQL, as QuerySet.iterator() uses.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_size):
            for row in rows:
                yield (*row[:3], as_datetime(row[3]), as_datetime(row[4]), *row[5:])


QUESTION_CSV_HEADER = [
    "part",
    "question",
    "prompt",
    "learners",
    "answers",
    "first_tries",
    "first_try_right",
    "first_try_rate",
    "average_attempts",
    "most_chosen_wrong_answer",
    "most_chosen_wrong_count",
]


def question_stats_rows(*, course: Course, filters: DashboardFilters):
    for row in question_stats_list(course=course, filters=filters):
        yield (
            row.question.chapter.number,
            row.question.position,
            row.question.prompt,
            row.learners,
            row.answers,
            row.first_tries,
            row.first_try_right,
            "" if row.first_try_rate is None else row.first_try_rate,
            "" if row.average_attempts is None else row.average_attempts,
            row.top_wrong_choice,
            row.top_wrong_count,
        )

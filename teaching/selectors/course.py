"""The course dashboard: enrolled and active learners, the chapter funnel, quiz questions learners
miss, exercises that fail and learners who look stuck.

Every figure is computed by the database (aggregates, annotations, window functions), one query
per block of the page, so a dashboard costs the same number of queries for ten learners or ten
thousand. Python only loops over a course's chapters, questions and exercises, never its learners.

Runs are never read from the run table. With no date range (or one that leaves nothing out) the
exercise figures are the course's or the cohort's counts (ExerciseCount and its siblings, a few
rows per exercise), and the stuck learners each learner's standing; with a narrower range both are
grouped from the per-learner, per-day summaries (teaching.models). Chapter progress and exercise
passes come from their own per-learner rows. Quiz questions' figures are in
teaching.selectors.questions, stuck learners in teaching.selectors.stuck.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from courses.models import (
    Chapter,
    Cohort,
    Course,
    Exercise,
)
from teaching.models import (
    ChapterCount,
    ExerciseCount,
    ExerciseErrorCount,
    ExerciseErrorSummary,
    ExercisePassCount,
    ExerciseSummary,
    ExerciseTimeCount,
)
from teaching.selectors.filters import (
    _CHAPTER_FIELDS,
    TOP_ERRORS,
    DashboardFilters,
    _enrolments,
    _fetch_dicts,
    _learner_ids,
    _number,
    _rate,
    _summaries,
    _whole_history,
    _with_tables,
    active_days,
    cohort_list_for_course,
    stuck_failed_runs,
    stuck_idle_days,
    stuck_shown,
)
from teaching.selectors.questions import QuestionStats, question_stats_list
from teaching.selectors.stuck import StuckLearner, stuck_learner_list


@dataclass(frozen=True)
class ChapterFunnelRow:
    chapter: Chapter
    started: int
    quiz_finished: int
    completed: int
    completed_rate: float | None


@dataclass(frozen=True)
class ExerciseStats:
    exercise: Exercise
    learners_ran: int
    learners_passed: int
    pass_rate: float | None
    runs: int
    timed_out: int
    memory_stops: int
    median_runs_to_pass: float | None
    median_duration_ms: float | None
    error_types: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class CourseDashboard:
    course: Course
    filters: DashboardFilters
    cohorts: list[Cohort]
    enrolled: int
    active: int
    active_days: int
    funnel: list[ChapterFunnelRow]
    questions: list[QuestionStats]
    exercises: list[ExerciseStats]
    stuck: list[StuckLearner]
    stuck_total: int
    stuck_failed_runs: int
    stuck_idle_days: int

    def chart_data(self) -> dict:
        """What the page's charts draw (a JSON data island read by charts.js)."""
        return {
            "funnel": [
                {"label": f"Part {row.chapter.number}", "title": row.chapter.title, "value": row.completed}
                for row in self.funnel
            ],
            "funnel_max": self.enrolled,
            "questions": [
                {
                    "label": f"P{q.question.chapter.number} Q{q.question.position}",
                    "title": q.question.prompt[:80],
                    "value": q.first_try_rate,
                }
                for q in self.questions
            ],
            "exercises": [
                {"label": e.exercise.slug, "title": e.exercise.title, "value": e.pass_rate} for e in self.exercises
            ],
        }


def course_dashboard(*, course: Course, filters: DashboardFilters) -> CourseDashboard:
    """Everything the course dashboard shows, in a fixed number of queries (eight, nine with a start date)."""
    reference = filters.reference_time()
    days = active_days()
    counts = _enrolments(course=course, filters=filters).aggregate(
        enrolled=Count("id"),
        active=Count("id", filter=Q(last_seen_at__gt=reference - dt.timedelta(days=days), last_seen_at__lte=reference)),
    )
    whole_history = _whole_history(course=course, filters=filters)
    stuck, stuck_total = stuck_learner_list(
        course=course, filters=filters, limit=stuck_shown(), whole_history=whole_history
    )
    return CourseDashboard(
        course=course,
        filters=filters,
        cohorts=cohort_list_for_course(course=course),
        enrolled=counts["enrolled"],
        active=counts["active"],
        active_days=days,
        funnel=chapter_funnel(course=course, filters=filters, enrolled=counts["enrolled"], whole_history=whole_history),
        questions=question_stats_list(course=course, filters=filters, whole_history=whole_history),
        exercises=exercise_stats_list(course=course, filters=filters, whole_history=whole_history),
        stuck=stuck,
        stuck_total=stuck_total,
        stuck_failed_runs=stuck_failed_runs(),
        stuck_idle_days=stuck_idle_days(),
    )


def chapter_funnel(
    *, course: Course, filters: DashboardFilters, enrolled: int, whole_history: bool | None = None
) -> list[ChapterFunnelRow]:
    """Per chapter, in order: learners who started it (a progress row), finished its quiz, completed
    it. With no date range (or one that leaves nothing out), from the course's or cohort's counts
    (`whole_history`: as for stuck_learner_list)."""
    if whole_history is None:
        whole_history = _whole_history(course=course, filters=filters)
    if whole_history:
        counts = ChapterCount.objects.filter(course=course, cohort=filters.cohort, chapter_id=OuterRef("pk"))
        chapters = (
            Chapter.objects.filter(course=course)
            .only("id", "number", "slug", "title", "published", "course_id")
            .annotate(**{name: Coalesce(Subquery(counts.values(name)[:1]), 0) for name in _FUNNEL})
            .order_by("number")
        )
    else:
        chapters = _funnel_from_progress(course=course, filters=filters)
    return [
        ChapterFunnelRow(
            chapter=chapter,
            started=chapter.started,
            quiz_finished=chapter.quiz_finished,
            completed=chapter.completed,
            completed_rate=_rate(chapter.completed, enrolled),
        )
        for chapter in chapters
    ]


_FUNNEL = ("started", "quiz_finished", "completed")


def _funnel_from_progress(*, course: Course, filters: DashboardFilters) -> QuerySet[Chapter]:
    learners = Q(progress__user_id__in=_learner_ids(course=course, filters=filters))
    return (
        Chapter.objects.filter(course=course)
        .only("id", "number", "slug", "title", "published", "course_id")
        .annotate(
            started=Count("progress", filter=learners),
            quiz_finished=Count(
                "progress",
                filter=learners
                & Q(progress__quiz_finished_at__isnull=False)
                & filters.in_range("progress__quiz_finished_at"),
            ),
            completed=Count(
                "progress",
                filter=learners & Q(progress__completed_at__isnull=False) & filters.in_range("progress__completed_at"),
            ),
        )
        .order_by("number")
    )


# The medians of the learners' runs to a pass and mean run times, per exercise: the middle value,
# or the mean of the two middle ones. PostgreSQL's percentile_cont sorts each exercise's values
# once (a third of the block's time at 100,000 learners went to the portable form); elsewhere,
# medians from counts of each value (histograms): the values are numbered by a running sum of
# their counts, and the median is the value at the middle place, or the two middle places.
# The rows (kind, exercise, value v, its count n, places up to it `upto`, all places c) whose
# places hold the middle one or two.
_MIDDLE_PLACES = "(upto - n < (c + 1) / 2 AND (c + 1) / 2 <= upto) OR (upto - n < (c + 2) / 2 AND (c + 2) / 2 <= upto)"
_MEDIANS_FROM_PLACED = "".join(
    (
        """medians AS (
    SELECT exercise_id,
           AVG(CASE WHEN kind = 1 THEN v END) AS median_runs_to_pass,
           AVG(CASE WHEN kind = 2 THEN v END) AS median_duration_ms
    FROM placed
    WHERE """,
        _MIDDLE_PLACES,
        """
    GROUP BY exercise_id
),
""",
    )
)
_MEDIANS_FROM_COUNTED = "".join(
    (
        """placed AS (
    SELECT kind, exercise_id, v, CAST(n AS INTEGER) AS n,
           CAST(SUM(n) OVER (PARTITION BY kind, exercise_id ORDER BY v) AS INTEGER) AS upto,
           CAST(SUM(n) OVER (PARTITION BY kind, exercise_id) AS INTEGER) AS c
    FROM counted
),
""",
        _MEDIANS_FROM_PLACED,
    )
)
_MEDIANS_SQL = {
    "postgresql": """medians AS (
    SELECT exercise_id,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY to_pass) AS median_runs_to_pass,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY mean_ms) AS median_duration_ms
    FROM per_learner GROUP BY exercise_id
),
""",
    "other": "".join(
        (
            """counted AS (
    SELECT 1 AS kind, exercise_id, to_pass AS v, COUNT(*) AS n
    FROM per_learner WHERE to_pass IS NOT NULL GROUP BY exercise_id, to_pass
    UNION ALL
    SELECT 2 AS kind, exercise_id, mean_ms AS v, COUNT(*) AS n
    FROM per_learner WHERE mean_ms IS NOT NULL GROUP BY exercise_id, mean_ms
),
""",
            _MEDIANS_FROM_COUNTED,
        )
    ),
}
_EXERCISE_FIGURES_SQL = """,
summaries AS (
    SELECT course_summaries.* FROM course_summaries JOIN learners ON learners.user_id = course_summaries.user_id
),
per_learner AS (
    -- to_pass: the first pass's number among the learner's runs, less the runs before the range.
    SELECT exercise_id, user_id, SUM(runs) AS runs, SUM(timed_out) AS timed_out, SUM(memory_stops) AS memory_stops,
           MIN(first_pass_number) - MIN(runs_before) AS to_pass,
           CASE WHEN SUM(timed_runs) > 0
                THEN CAST(ROUND(1.0 * SUM(duration_total_ms) / SUM(timed_runs)) AS INTEGER) END AS mean_ms
    FROM summaries GROUP BY exercise_id, user_id
),
run_figures AS (
    SELECT exercise_id, SUM(runs) AS runs, SUM(timed_out) AS timed_out, SUM(memory_stops) AS memory_stops,
           COUNT(*) AS learners_ran, COUNT(to_pass) AS learners_passed
    FROM per_learner GROUP BY exercise_id
),
{medians}errors AS (
    SELECT exercise_id, error_name, SUM(runs) AS n,
           ROW_NUMBER() OVER (PARTITION BY exercise_id ORDER BY SUM(runs) DESC, error_name) AS place
    FROM course_errors JOIN learners ON learners.user_id = course_errors.user_id
    GROUP BY exercise_id, error_name
)
SELECT run_figures.*, median_runs_to_pass, median_duration_ms, error_name, n
FROM run_figures
LEFT JOIN medians ON medians.exercise_id = run_figures.exercise_id
LEFT JOIN errors ON errors.exercise_id = run_figures.exercise_id AND errors.place <= %s
ORDER BY run_figures.exercise_id, errors.place
"""


def _exercise_figures(*, course: Course, filters: DashboardFilters) -> dict[int, dict]:
    """{exercise id: figures} for the exercises the counted learners ran in the range, read in
    one pass over the learners' summaries (teaching.models), never the runs; `error_types` holds
    the commonest error names with their counts, `median_duration_ms` is the median of the
    learners' mean run times."""
    sql, params = _with_tables(
        _EXERCISE_FIGURES_SQL.format(medians=_MEDIANS_SQL.get(connection.vendor, _MEDIANS_SQL["other"])),
        learners=_learner_ids(course=course, filters=filters),
        course_summaries=_summaries(ExerciseSummary, course=course, filters=filters).values(
            "exercise_id",
            "user_id",
            "runs",
            "timed_out",
            "memory_stops",
            "runs_before",
            "first_pass_number",
            "timed_runs",
            "duration_total_ms",
        ),
        course_errors=_summaries(ExerciseErrorSummary, course=course, filters=filters).values(
            "exercise_id", "user_id", "error_name", "runs"
        ),
    )
    return _figures_by_exercise(_fetch_dicts(sql, [*params, TOP_ERRORS]))


# The same figures for the whole course or a cohort, from its counts (teaching.models.ExerciseCount
# and the rest): a few rows per exercise and value, whatever the number of learners. Mean run
# times take many values (a row each), so their middle is found in two steps: sums per bucket of
# 1024 ms place the middle in a bucket or two, and only those buckets' rows are read (`time_rows`,
# by the counts' index on exercise and value) and numbered.
_EXERCISE_COUNTS_SQL = "".join(
    (
        """,
time_buckets AS (
    SELECT exercise_id, mean_ms / 1024 AS b, SUM(learners) AS n
    FROM time_counts WHERE learners > 0 GROUP BY exercise_id, mean_ms / 1024
),
bucket_placed AS (
    SELECT exercise_id, b, CAST(n AS INTEGER) AS n,
           CAST(SUM(n) OVER (PARTITION BY exercise_id ORDER BY b) AS INTEGER) AS upto,
           CAST(SUM(n) OVER (PARTITION BY exercise_id) AS INTEGER) AS c
    FROM time_buckets
),
middle_buckets AS (
    SELECT exercise_id, b, upto - n AS before, c FROM bucket_placed
    WHERE """,
        _MIDDLE_PLACES,
        """
),
placed AS (
    SELECT 1 AS kind, exercise_id, runs_to_pass AS v, learners AS n,
           CAST(SUM(learners) OVER (PARTITION BY exercise_id ORDER BY runs_to_pass) AS INTEGER) AS upto,
           CAST(SUM(learners) OVER (PARTITION BY exercise_id) AS INTEGER) AS c
    FROM pass_counts WHERE learners > 0
    UNION ALL
    SELECT 2 AS kind, time_rows.exercise_id, mean_ms AS v, learners AS n,
           middle_buckets.before + CAST(
               SUM(learners) OVER (PARTITION BY time_rows.exercise_id, middle_buckets.b ORDER BY mean_ms) AS INTEGER
           ) AS upto,
           middle_buckets.c
    FROM middle_buckets JOIN time_rows ON time_rows.exercise_id = middle_buckets.exercise_id
        AND time_rows.mean_ms >= middle_buckets.b * 1024 AND time_rows.mean_ms < (middle_buckets.b + 1) * 1024
    WHERE learners > 0
),
""",
        _MEDIANS_FROM_PLACED,
        """errors AS (
    SELECT exercise_id, error_name, runs AS n,
           ROW_NUMBER() OVER (PARTITION BY exercise_id ORDER BY runs DESC, error_name) AS place
    FROM error_counts WHERE runs > 0
)
SELECT run_figures.*, median_runs_to_pass, median_duration_ms, error_name, n
FROM run_figures
LEFT JOIN medians ON medians.exercise_id = run_figures.exercise_id
LEFT JOIN errors ON errors.exercise_id = run_figures.exercise_id AND errors.place <= %s
WHERE run_figures.learners_ran > 0
ORDER BY run_figures.exercise_id, errors.place
""",
    )
)


def _exercise_figures_from_counts(*, course: Course, cohort: Cohort | None) -> dict[int, dict]:
    """_exercise_figures over every day, of the course's or one cohort's learners, summed by the
    writes (teaching.services.course_counts)."""
    scope = {"course": course, "cohort": cohort}
    sql, params = _with_tables(
        _EXERCISE_COUNTS_SQL,
        run_figures=ExerciseCount.objects.filter(**scope).values(
            "exercise_id", "runs", "timed_out", "memory_stops", "learners_ran", "learners_passed"
        ),
        pass_counts=ExercisePassCount.objects.filter(**scope).values("exercise_id", "runs_to_pass", "learners"),
        time_counts=ExerciseTimeCount.objects.filter(**scope).values("exercise_id", "mean_ms", "learners"),
        time_rows=ExerciseTimeCount.objects.filter(**scope).values("exercise_id", "mean_ms", "learners"),
        error_counts=ExerciseErrorCount.objects.filter(**scope).values("exercise_id", "error_name", "runs"),
    )
    return _figures_by_exercise(_fetch_dicts(sql, [*params, TOP_ERRORS]))


def _figures_by_exercise(rows: list[dict]) -> dict[int, dict]:
    figures: dict[int, dict] = {}
    for row in rows:
        error_name, count = row.pop("error_name"), row.pop("n")
        exercise = figures.setdefault(row["exercise_id"], {**row, "error_types": []})
        if error_name:
            exercise["error_types"].append((error_name, int(count)))
    return figures


def exercise_stats_list(
    *, course: Course, filters: DashboardFilters, whole_history: bool | None = None
) -> list[ExerciseStats]:
    """Per exercise: learners who ran it and who passed its check, runs, time-outs and memory
    stops, the median runs to a pass, the median of the learners' mean run times, and the
    commonest error types. Two queries (three with a date range). With no date range (or one that
    leaves nothing out) the figures are read from the course's or the cohort's counts, for a
    narrower range from the learners' summaries (`whole_history`: as for stuck_learner_list)."""
    if whole_history is None:
        whole_history = _whole_history(course=course, filters=filters)
    if whole_history:
        figures = _exercise_figures_from_counts(course=course, cohort=filters.cohort)
    else:
        figures = _exercise_figures(course=course, filters=filters)
    exercises = (
        Exercise.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "slug", "title", "position", *(f"chapter__{name}" for name in _CHAPTER_FIELDS))
        .order_by("chapter__number", "position")
    )
    rows = []
    for exercise in exercises:
        row = figures.get(exercise.pk, {})
        learners_ran, learners_passed = row.get("learners_ran", 0), row.get("learners_passed", 0)
        rows.append(
            ExerciseStats(
                exercise=exercise,
                learners_ran=learners_ran,
                learners_passed=learners_passed,
                pass_rate=_rate(learners_passed, learners_ran),
                runs=row.get("runs", 0),
                timed_out=row.get("timed_out", 0),
                memory_stops=row.get("memory_stops", 0),
                median_runs_to_pass=_number(row.get("median_runs_to_pass")),
                median_duration_ms=_number(row.get("median_duration_ms")),
                error_types=row.get("error_types", []),
            )
        )
    return rows

"""The dashboard figures by their definitions, computed per learner from the learners' own rows
(their summaries and progress), joined to the learners the filters count: what the dashboards'
counts (teaching.models.ExerciseCount, ExerciseDayCount and their siblings) must add up to. Slow
on a large course, which is why the dashboards read the counts; here, on small ones, it is the
yardstick."""

from django.db.models import Count, Q, QuerySet

from courses.models import Chapter, Course, Exercise, ExerciseState
from teaching.models import ExerciseErrorSummary, ExerciseSummary
from teaching.selectors.course import _MEDIANS_FROM_COUNTED, _figures_by_exercise
from teaching.selectors.filters import (
    TOP_ERRORS,
    DashboardFilters,
    enrolments_of,
    exercise_ids_of,
    fetch_dicts,
    learner_ids_of,
    summaries_of,
    with_tables,
)
from teaching.selectors.stuck import (
    _WORST_SQL,
    _failing_runs_by_exercise,
    _greatest,
    _idle_since,
    _per_learner_progress,
    _stuck_rows,
)

_EXERCISE_FIGURES_SQL = "".join(
    (
        """,
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
counted AS (
    SELECT 1 AS kind, exercise_id, to_pass AS v, COUNT(*) AS n
    FROM per_learner WHERE to_pass IS NOT NULL GROUP BY exercise_id, to_pass
    UNION ALL
    SELECT 2 AS kind, exercise_id, mean_ms AS v, COUNT(*) AS n
    FROM per_learner WHERE mean_ms IS NOT NULL GROUP BY exercise_id, mean_ms
),
""",
        _MEDIANS_FROM_COUNTED,
        """errors AS (
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
""",
    )
)


def exercise_figures(*, course: Course, filters: DashboardFilters) -> dict[int, dict]:
    """{exercise id: figures} of the counted learners' summaries in the range. Runs to a pass: the
    first pass's number in the range less the learner's runs before it; run time: the median of
    the learners' mean run times in the range."""
    sql, params = with_tables(
        _EXERCISE_FIGURES_SQL,
        learners=learner_ids_of(course=course, filters=filters),
        course_summaries=summaries_of(ExerciseSummary, course=course, filters=filters).values(
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
        course_errors=summaries_of(ExerciseErrorSummary, course=course, filters=filters).values(
            "exercise_id", "user_id", "error_name", "runs"
        ),
    )
    return _figures_by_exercise(fetch_dicts(sql, [*params, TOP_ERRORS]))


def chapter_funnel(*, course: Course, filters: DashboardFilters) -> QuerySet[Chapter]:
    """Per chapter: the counted learners with a progress row, and those who finished its quiz and
    completed it in the range."""
    learners = Q(progress__user_id__in=learner_ids_of(course=course, filters=filters))
    return (
        Chapter.objects.filter(course=course)
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


_STUCK_SQL = "".join(
    (
        """,
progress AS (
    SELECT learners.user_id, learners.user__username AS username,
           {greatest}(learners.enrolled_at, COALESCE(last_passes.at, learners.enrolled_at),
                      COALESCE(rights.at, learners.enrolled_at), COALESCE(completions.at, learners.enrolled_at))
               AS last_progress_at,
           COALESCE(completions.n, 0) AS completed
    FROM learners
    LEFT JOIN last_passes ON last_passes.user_id = learners.user_id
    LEFT JOIN rights ON rights.user_id = learners.user_id
    LEFT JOIN completions ON completions.user_id = learners.user_id
),""",
        _WORST_SQL,
        """stuck AS (
    SELECT progress.user_id, username, last_progress_at, worst.failed, worst.title,
           (last_progress_at < %s AND completed < (SELECT COUNT(*) FROM chapters)) AS idle
    FROM progress LEFT JOIN worst ON worst.user_id = progress.user_id AND worst.n = 1
)
SELECT user_id, username, last_progress_at, idle, COALESCE(failed, 0), COALESCE(title, ''), COUNT(*) OVER ()
FROM stuck
WHERE idle OR failed IS NOT NULL
ORDER BY failed IS NULL, last_progress_at, user_id
LIMIT %s
""",
    )
)


def stuck_learner_list(*, course: Course, filters: DashboardFilters, limit: int):
    """Learners who look stuck as of the range's end (or now): every learner's latest progress
    before it grouped from their passes, right answers and completions, and their failing runs in
    the range from their summaries."""
    sql, params = with_tables(
        _STUCK_SQL.format(greatest=_greatest()),
        learners=enrolments_of(course=course, filters=filters).values("user_id", "user__username", "enrolled_at"),
        failing=_failing_runs_by_exercise(course=course, filters=filters),
        passes=ExerciseState.objects.filter(exercise_id__in=exercise_ids_of(course=course))
        .exclude(passed_at=None)
        .values("user_id", "exercise_id"),
        exercises=Exercise.objects.filter(chapter__course=course).values("id", "title", "chapter__number"),
        chapters=Chapter.objects.filter(course=course).values("id"),
        **_per_learner_progress(course=course, filters=filters),
    )
    return _stuck_rows(sql, [*params, _idle_since(filters), limit])

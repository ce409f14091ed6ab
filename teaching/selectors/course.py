"""The course dashboard: enrolled and active learners, the chapter funnel, quiz questions learners
miss, exercises that fail and learners who look stuck.

Every figure is computed by the database (aggregates, annotations, window functions), one query
per block of the page, so a dashboard costs the same number of queries for ten learners or ten
thousand. Python only loops over a course's chapters, questions and exercises, never its learners.

Neither runs nor learners are read one by one. With no date range (or one that leaves nothing out)
the exercise and chapter figures are the course's or the cohort's counts (ExerciseCount,
ChapterCount and their siblings, a few rows per exercise or chapter); with a narrower range, the
sums of its days of the course's or the cohort's day counts (ExerciseDayCount and its siblings),
which count the events of the learners enrolled (in the cohort) now. Quiz questions' figures are in
teaching.selectors.questions, stuck learners in teaching.selectors.stuck.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from courses.models import Chapter, Course, Exercise, HintReveal
from teaching.models import (
    ChapterCount,
    ChapterDayCount,
    Cohort,
    ExerciseCount,
    ExerciseDayCount,
    ExerciseErrorCount,
    ExerciseErrorDayCount,
    ExercisePassCount,
    ExercisePassDayCount,
    ExerciseTimeCount,
    ExerciseTimeDayCount,
)
from teaching.selectors.filters import (
    CHAPTER_COLUMNS,
    TOP_ERRORS,
    DashboardFilters,
    active_days,
    as_number,
    cohort_list_for_course,
    day_counts_of,
    enrolments_of,
    fetch_dicts,
    range_start,
    rate_of,
    reaches_today,
    reads_whole_history,
    stuck_failed_runs,
    stuck_idle_days,
    stuck_shown,
    with_tables,
)
from teaching.selectors.questions import QuestionStats, question_stats_list
from teaching.selectors.review import ReviewFigures, review_figures
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
    # Hints revealed in the range, and by how many learners (courses.models.HintReveal).
    hints_revealed: int = 0
    learners_hinted: int = 0


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
    review: ReviewFigures | None = None  # spaced review: due now, answers given, retained

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
    """Everything the course dashboard shows, in a fixed number of queries (nine, ten with a start date)."""
    reference = filters.reference_time()
    days = active_days()
    counts = enrolments_of(course=course, filters=filters).aggregate(
        enrolled=Count("id"),
        active=Count("id", filter=Q(last_seen_at__gt=reference - dt.timedelta(days=days), last_seen_at__lte=reference)),
    )
    whole_history = reads_whole_history(course=course, filters=filters)
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
        review=review_figures(course=course, filters=filters),
    )


def chapter_funnel(
    *, course: Course, filters: DashboardFilters, enrolled: int, whole_history: bool | None = None
) -> list[ChapterFunnelRow]:
    """Per chapter, in order: learners who started it (a progress row), finished its quiz, completed
    it. With no date range (or one that leaves nothing out), from the course's or cohort's counts,
    else from its day counts (`whole_history`: as for stuck_learner_list)."""
    if whole_history is None:
        whole_history = reads_whole_history(course=course, filters=filters)
    chapters = _funnel_from_counts(course=course, filters=filters, whole_history=whole_history)
    return [
        ChapterFunnelRow(
            chapter=chapter,
            started=chapter.started,
            quiz_finished=chapter.quiz_finished,
            completed=chapter.completed,
            completed_rate=rate_of(chapter.completed, enrolled),
        )
        for chapter in chapters
    ]


_FUNNEL = ("started", "quiz_finished", "completed")


def _funnel_from_counts(*, course: Course, filters: DashboardFilters, whole_history: bool) -> QuerySet[Chapter]:
    """The funnel from the course's or cohort's counts: learners who started a chapter (at any
    time), and who finished its quiz or completed it on the range's days. A range that ended before
    today counts as starters the learners enrolled by its end: the starters of the days up to it."""
    counts = ChapterCount.objects.filter(course=course, cohort=filters.cohort, chapter_id=OuterRef("pk"))
    figures = {name: Coalesce(Subquery(counts.values(name)[:1]), 0) for name in _FUNNEL}

    def day_sum(days: QuerySet, name: str) -> Coalesce:
        days = days.filter(chapter_id=OuterRef("pk")).values("chapter_id")
        return Coalesce(Subquery(days.annotate(n=Sum(name)).values("n")), 0)

    if not whole_history:
        days = day_counts_of(ChapterDayCount, course=course, filters=filters)
        for name in ("quiz_finished", "completed"):
            figures[name] = day_sum(days, name)
    if not reaches_today(filters):
        enrolled_by_end = ChapterDayCount.objects.filter(course=course, cohort=filters.cohort, day__lte=filters.end)
        figures["started"] = day_sum(enrolled_by_end, "enrolled_starters")
    return (
        Chapter.objects.filter(course=course)
        .only("id", "number", "slug", "title", "published", "course_id")
        .annotate(**figures)
        .order_by("number")
    )


# The medians of the learners' runs to a pass and mean run times, per exercise: the middle value,
# or the mean of the two middle ones, from counts of each value (histograms): the values are
# numbered by a running sum of their counts, and the median is the value at the middle place, or
# the two middle places.
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
    """{exercise id: figures} over every day, of the course's or one cohort's learners, summed by the
    writes (teaching.services.course_counts)."""
    scope = {"course": course, "cohort": cohort}
    sql, params = with_tables(
        _EXERCISE_COUNTS_SQL,
        run_figures=ExerciseCount.objects.filter(**scope).values(
            "exercise_id", "runs", "timed_out", "memory_stops", "learners_ran", "learners_passed"
        ),
        pass_counts=ExercisePassCount.objects.filter(**scope).values("exercise_id", "runs_to_pass", "learners"),
        time_counts=ExerciseTimeCount.objects.filter(**scope).values("exercise_id", "mean_ms", "learners"),
        time_rows=ExerciseTimeCount.objects.filter(**scope).values("exercise_id", "mean_ms", "learners"),
        error_counts=ExerciseErrorCount.objects.filter(**scope).values("exercise_id", "error_name", "runs"),
    )
    return _figures_by_exercise(fetch_dicts(sql, [*params, TOP_ERRORS]))


# The same figures for the days of a range, from the course's or the cohort's day
# counts (teaching.models.ExerciseDayCount and its siblings): a learner is counted once, in the row
# of their first day in the range (its previous day comes before the range); runs to a pass are those
# of the learners whose first pass came in the range; the run time is the median of the learners'
# mean run times of each day in the range, to two significant figures.
_EXERCISE_DAY_COUNTS_SQL = "".join(
    (
        """,
run_figures AS (
    SELECT exercise_id, SUM(runs) AS runs, SUM(timed_out) AS timed_out, SUM(memory_stops) AS memory_stops,
           SUM(CASE WHEN prev_day < %s THEN learners ELSE 0 END) AS learners_ran
    FROM day_counts GROUP BY exercise_id
),
passed AS (
    SELECT exercise_id, SUM(CASE WHEN prev_day < %s THEN learners ELSE 0 END) AS learners_passed
    FROM pass_days GROUP BY exercise_id
),
counted AS (
    SELECT 1 AS kind, exercise_id, runs_to_pass AS v, SUM(learners) AS n
    FROM pass_days WHERE runs_to_pass > 0 GROUP BY exercise_id, runs_to_pass HAVING SUM(learners) > 0
    UNION ALL
    SELECT 2 AS kind, exercise_id, mean_ms AS v, SUM(learners) AS n
    FROM time_days GROUP BY exercise_id, mean_ms HAVING SUM(learners) > 0
),
""",
        _MEDIANS_FROM_COUNTED,
        """errors AS (
    SELECT exercise_id, error_name, SUM(runs) AS n,
           ROW_NUMBER() OVER (PARTITION BY exercise_id ORDER BY SUM(runs) DESC, error_name) AS place
    FROM error_days GROUP BY exercise_id, error_name HAVING SUM(runs) > 0
)
SELECT run_figures.*, COALESCE(learners_passed, 0) AS learners_passed, median_runs_to_pass, median_duration_ms,
       error_name, n
FROM run_figures
LEFT JOIN passed ON passed.exercise_id = run_figures.exercise_id
LEFT JOIN medians ON medians.exercise_id = run_figures.exercise_id
LEFT JOIN errors ON errors.exercise_id = run_figures.exercise_id AND errors.place <= %s
WHERE run_figures.learners_ran > 0
ORDER BY run_figures.exercise_id, errors.place
""",
    )
)


def _exercise_figures_from_day_counts(*, course: Course, filters: DashboardFilters) -> dict[int, dict]:
    """{exercise id: figures} for a range's days, summed from the course's or cohort's day counts."""
    sql, params = with_tables(
        _EXERCISE_DAY_COUNTS_SQL,
        day_counts=day_counts_of(ExerciseDayCount, course=course, filters=filters).values(
            "exercise_id", "prev_day", "runs", "timed_out", "memory_stops", "learners"
        ),
        pass_days=day_counts_of(ExercisePassDayCount, course=course, filters=filters).values(
            "exercise_id", "prev_day", "runs_to_pass", "learners"
        ),
        time_days=day_counts_of(ExerciseTimeDayCount, course=course, filters=filters).values(
            "exercise_id", "mean_ms", "learners"
        ),
        error_days=day_counts_of(ExerciseErrorDayCount, course=course, filters=filters).values(
            "exercise_id", "error_name", "runs"
        ),
    )
    start = range_start(filters)
    return _figures_by_exercise(fetch_dicts(sql, [*params, start, start, TOP_ERRORS]))


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
    stops, the median runs to a first pass, the median run time, and the commonest error types.
    Two queries (three with a date range). With no date range (or one that leaves nothing out) the
    figures are read from the course's or the cohort's counts: the median run time is the median of
    the learners' mean run times. For a narrower range they are the sums of its days of the day
    counts: runs to a first pass are counted for the learners whose first pass came in the range,
    and the median run time is the median of the learners' mean run times of each day they ran it
    in the range, to two significant figures (`whole_history`: as for stuck_learner_list)."""
    if whole_history is None:
        whole_history = reads_whole_history(course=course, filters=filters)
    if whole_history:
        figures = _exercise_figures_from_counts(course=course, cohort=filters.cohort)
    else:
        figures = _exercise_figures_from_day_counts(course=course, filters=filters)
    exercises = (
        Exercise.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "slug", "title", "position", *(f"chapter__{name}" for name in CHAPTER_COLUMNS))
        .annotate(**_hint_figures(filters))
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
                pass_rate=rate_of(learners_passed, learners_ran),
                runs=row.get("runs", 0),
                timed_out=row.get("timed_out", 0),
                memory_stops=row.get("memory_stops", 0),
                median_runs_to_pass=as_number(row.get("median_runs_to_pass")),
                median_duration_ms=as_number(row.get("median_duration_ms")),
                error_types=row.get("error_types", []),
                hints_revealed=exercise.hints_revealed,
                learners_hinted=exercise.learners_hinted,
            )
        )
    return rows


def _hint_figures(filters: DashboardFilters) -> dict:
    """Hints revealed per exercise and the learners who revealed them, in the range and cohort, as
    subqueries of the exercises' own query: read from the reveals (one index, (exercise, user))."""
    reveals = HintReveal.objects.filter(filters.in_range("revealed_at"), exercise=OuterRef("pk"))
    if filters.cohort is not None:
        reveals = reveals.filter(user__cohort_memberships__cohort=filters.cohort)
    per_exercise = reveals.order_by().values("exercise")
    return {
        "hints_revealed": Coalesce(Subquery(per_exercise.annotate(n=Count("id")).values("n")[:1]), 0),
        "learners_hinted": Coalesce(Subquery(per_exercise.annotate(n=Count("user", distinct=True)).values("n")[:1]), 0),
    }

"""Reads for the instructor dashboards: who may teach a course, and every figure a dashboard shows.

Access: a course's instructors and admins see its dashboards; anyone else is answered 404 as if
the course did not exist (courses.selectors' rule).

Every figure is computed by the database (aggregates, annotations, window functions), one query
per block of the page, so a dashboard costs the same number of queries for ten learners or ten
thousand. Python only loops over a course's chapters, questions and exercises, never its learners.

Speed on a large course (bench/dashboard.py): per-learner figures are grouped once per table and
joined to the learners (_with_tables composes the ORM's grouped querysets into one SQL statement),
never looked up by a correlated subquery per learner; runs and answers are joined to the counted
learners rather than filtered by `user_id IN (...)`, whose row count the planner misjudges for a
cohort; each block reads the big tables (runs, quiz answers) once. The SQL runs on PostgreSQL and
SQLite; GREATEST and the medians' percentile_cont are PostgreSQL's, with a portable path beside them.

Filters (cohort and date range) apply to everything:
- the learners counted are those enrolled before the end of the range, in the cohort if one is set;
- events (runs, quiz answers, chapter completions, passes) count when they happened in the range;
- "active" means seen in the ACTIVE_DAYS before the end of the range (now, with no end).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import (
    Count,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.http import Http404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.models import User
from courses.models import (
    Chapter,
    ChapterProgress,
    Choice,
    Cohort,
    CohortMembership,
    Course,
    Enrolment,
    Exercise,
    ExerciseState,
    Question,
    QuizAnswer,
)
from courses.selectors import _is_staff, course_taught_by
from runner.models import Run


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def active_days() -> int:
    return _setting("DASHBOARD_ACTIVE_DAYS", 7)


def stuck_failed_runs() -> int:
    """A learner with this many runs of one exercise that did not pass, and no pass, looks stuck."""
    return _setting("DASHBOARD_STUCK_FAILED_RUNS", 8)


def stuck_idle_days() -> int:
    """A learner who has not finished the course and made no progress for this many days looks stuck."""
    return _setting("DASHBOARD_STUCK_IDLE_DAYS", 14)


def stuck_shown() -> int:
    return _setting("DASHBOARD_STUCK_SHOWN", 50)


# The chapter columns a dashboard row shows (its text stays in the database).
_CHAPTER_FIELDS = ("id", "number", "slug", "title")
MEMORY_REASON_PREFIX = "memory limit"  # runner.sandbox.protocol.limit_reason("memory")
TOP_ERRORS = 3

# --- Access -----------------------------------------------------------------------------------------


def course_list_taught_by(*, user) -> QuerySet[Course]:
    """The courses whose dashboards the user may open: all of them for admins, the ones they
    teach for instructors, none for anyone else."""
    if _is_staff(user):
        return Course.objects.all()
    if not (user and user.is_authenticated):
        return Course.objects.none()
    return Course.objects.filter(instructors=user)


def course_is_teachable_by(*, course: Course, user) -> bool:
    return _is_staff(user) or course_taught_by(course=course, user=user)


def course_get_for_teaching(*, user, slug: str) -> Course:
    course = course_list_taught_by(user=user).filter(slug=slug).first()
    if course is None:
        raise Http404("No such course.")
    return course


def learner_get_for_teaching(*, course: Course, learner_id: int) -> User:
    """A learner enrolled in the course (the caller may teach it); anyone else is 404."""
    learner = User.objects.filter(pk=learner_id, enrolments__course=course).first()
    if learner is None:
        raise Http404("No such learner in this course.")
    return learner


def cohort_list_for_course(*, course: Course) -> list[Cohort]:
    return list(Cohort.objects.filter(course=course).annotate(member_count=Count("memberships")).order_by("name"))


def cohort_get_by_invite_code(*, invite_code: str) -> Cohort:
    cohort = Cohort.objects.select_related("course").filter(invite_code=invite_code).first()
    if cohort is None:
        raise Http404("No cohort has this invite code.")
    return cohort


# --- Filters ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DashboardFilters:
    cohort: Cohort | None = None
    start: dt.date | None = None
    end: dt.date | None = None  # inclusive

    @property
    def start_at(self) -> dt.datetime | None:
        if self.start is None:
            return None
        return dt.datetime.combine(self.start, dt.time.min, tzinfo=dt.UTC)

    @property
    def end_before(self) -> dt.datetime | None:
        """The first moment after the range."""
        if self.end is None:
            return None
        return dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)

    def reference_time(self) -> dt.datetime:
        """ "Now" for the range: its end, or now when it has none."""
        now = timezone.now()
        return min(now, self.end_before) if self.end_before else now

    def in_range(self, lookup: str) -> Q:
        q = Q()
        if self.start_at is not None:
            q &= Q(**{f"{lookup}__gte": self.start_at})
        if self.end_before is not None:
            q &= Q(**{f"{lookup}__lt": self.end_before})
        return q

    def as_params(self) -> dict[str, str]:
        params = {}
        if self.cohort is not None:
            params["cohort"] = str(self.cohort.pk)
        if self.start is not None:
            params["start"] = self.start.isoformat()
        if self.end is not None:
            params["end"] = self.end.isoformat()
        return params


def dashboard_filters_from_params(*, course: Course, params) -> DashboardFilters:
    """`cohort` (an id of one of the course's cohorts), `start` and `end` (YYYY-MM-DD, inclusive),
    each optional. Raises ValidationError with a message per bad field."""
    errors: dict[str, str] = {}
    cohort = None
    cohort_id = (params.get("cohort") or "").strip()
    if cohort_id:
        cohort = Cohort.objects.filter(course=course, pk=int(cohort_id)).first() if cohort_id.isdigit() else None
        if cohort is None:
            errors["cohort"] = "No such cohort in this course."
    dates: dict[str, dt.date | None] = {}
    for name in ("start", "end"):
        value = (params.get(name) or "").strip()
        dates[name] = None
        if value:
            try:
                dates[name] = dt.date.fromisoformat(value)
            except ValueError:
                errors[name] = "Give a date as YYYY-MM-DD."
    if dates["start"] and dates["end"] and dates["start"] > dates["end"]:
        errors["end"] = "The end comes before the start."
    if errors:
        raise ValidationError(errors)
    return DashboardFilters(cohort=cohort, start=dates["start"], end=dates["end"])


def _enrolments(*, course: Course, filters: DashboardFilters) -> QuerySet[Enrolment]:
    """The learners a dashboard counts."""
    enrolments = Enrolment.objects.filter(course=course)
    if filters.cohort is not None:
        enrolments = enrolments.filter(
            user_id__in=CohortMembership.objects.filter(cohort=filters.cohort).values("user_id")
        )
    if filters.end_before is not None:
        enrolments = enrolments.filter(enrolled_at__lt=filters.end_before)
    return enrolments


def _learner_ids(*, course: Course, filters: DashboardFilters) -> QuerySet:
    return _enrolments(course=course, filters=filters).values("user_id")


def _exercise_ids(*, course: Course) -> QuerySet:
    return Exercise.objects.filter(chapter__course=course).values("id")


def _question_ids(*, course: Course) -> QuerySet:
    return Question.objects.filter(chapter__course=course).values("id")


def _course_runs(*, course: Course, filters: DashboardFilters) -> QuerySet[Run]:
    """Finished runs of the course's exercises in the range, by anyone: callers join them to the
    counted learners (a join the planner sizes well, where `user_id IN (...)` of a cohort's
    learners was misjudged as a handful of rows and looked up one learner at a time)."""
    return Run.objects.filter(
        filters.in_range("created_at"),
        exercise_id__in=_exercise_ids(course=course),
        status__in=Run.TERMINAL,
    )


def _course_answers(*, course: Course, filters: DashboardFilters) -> QuerySet[QuizAnswer]:
    """Quiz answers to the course's questions in the range, by anyone (joined like _course_runs)."""
    return QuizAnswer.objects.filter(filters.in_range("answered_at"), question_id__in=_question_ids(course=course))


def _fetch_dicts(sql: str, params: list) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [column[0] for column in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _number(value) -> float | None:
    if value is None:
        return None
    return float(value) if isinstance(value, Decimal | float) else value


def _datetime(value) -> dt.datetime | None:
    """A timestamp read by raw SQL: PostgreSQL gives datetimes, SQLite text."""
    if isinstance(value, str):
        value = parse_datetime(value)
        return value if value is None or timezone.is_aware(value) else timezone.make_aware(value, dt.UTC)
    return value


def _with_tables(sql: str, **tables: QuerySet) -> tuple[str, list]:
    """`sql` after WITH name(columns) AS (the queryset's SQL) for each values() queryset: figures
    grouped once and joined once in plain SQL, where the ORM could only repeat a correlated
    subquery per row. Columns are named as in values(), annotations last."""
    parts, params = [], []
    for name, queryset in tables.items():
        query = queryset.order_by().query  # row order means nothing inside WITH
        columns = [*query.values_select, *query.annotation_select]
        inner, inner_params = query.sql_with_params()
        parts.append(f"{name}({', '.join(columns)}) AS ({inner})")
        params.extend(inner_params)
    return "WITH " + ",\n".join(parts) + sql, params


# --- The course dashboard ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChapterFunnelRow:
    chapter: Chapter
    started: int
    quiz_finished: int
    completed: int
    completed_rate: float | None


@dataclass(frozen=True)
class QuestionStats:
    question: Question
    first_tries: int
    first_try_right: int
    first_try_rate: float | None
    average_attempts: float | None
    learners: int
    answers: int
    top_wrong_choice: str = ""
    top_wrong_count: int = 0


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
class StuckLearner:
    user_id: int
    username: str
    last_progress_at: dt.datetime | None
    failed_runs: int
    failed_exercise: str
    reasons: list[str]


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
    """Everything the course dashboard shows, in a fixed number of queries (eight)."""
    reference = filters.reference_time()
    days = active_days()
    counts = _enrolments(course=course, filters=filters).aggregate(
        enrolled=Count("id"),
        active=Count("id", filter=Q(last_seen_at__gt=reference - dt.timedelta(days=days), last_seen_at__lte=reference)),
    )
    stuck, stuck_total = stuck_learner_list(course=course, filters=filters, limit=stuck_shown())
    return CourseDashboard(
        course=course,
        filters=filters,
        cohorts=cohort_list_for_course(course=course),
        enrolled=counts["enrolled"],
        active=counts["active"],
        active_days=days,
        funnel=chapter_funnel(course=course, filters=filters, enrolled=counts["enrolled"]),
        questions=question_stats_list(course=course, filters=filters),
        exercises=exercise_stats_list(course=course, filters=filters),
        stuck=stuck,
        stuck_total=stuck_total,
        stuck_failed_runs=stuck_failed_runs(),
        stuck_idle_days=stuck_idle_days(),
    )


def chapter_funnel(*, course: Course, filters: DashboardFilters, enrolled: int) -> list[ChapterFunnelRow]:
    """Per chapter, in order: learners who started it (a progress row), finished its quiz, completed it."""
    learners = Q(progress__user_id__in=_learner_ids(course=course, filters=filters))
    chapters = (
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


_QUESTION_FIGURES_SQL = """,
answers AS (SELECT course_answers.* FROM course_answers JOIN learners ON learners.user_id = course_answers.user_id),
figures AS (
    SELECT question_id,
           SUM(CASE WHEN attempt = 1 THEN 1 ELSE 0 END) AS first_tries,
           SUM(CASE WHEN attempt = 1 AND is_correct THEN 1 ELSE 0 END) AS first_try_right,
           -- A learner's right answer ends their tries at a question, so its attempt number is
           -- how many tries they took.
           AVG(CASE WHEN is_correct THEN attempt END) AS average_attempts,
           COUNT(DISTINCT user_id) AS learners,
           COUNT(*) AS answers
    FROM answers GROUP BY question_id
),
wrong AS (
    SELECT question_id, choice_id, COUNT(*) AS picked FROM answers WHERE NOT is_correct GROUP BY question_id, choice_id
),
ranked AS (
    SELECT wrong.question_id, choices.text, wrong.picked,
           ROW_NUMBER() OVER (PARTITION BY wrong.question_id ORDER BY wrong.picked DESC, choices.position) AS n
    FROM wrong JOIN choices ON choices.id = wrong.choice_id
)
SELECT figures.*, ranked.text AS top_wrong_choice, ranked.picked AS top_wrong_count
FROM figures LEFT JOIN ranked ON ranked.question_id = figures.question_id AND ranked.n = 1
"""


def _question_figures(*, course: Course, filters: DashboardFilters) -> dict[int, dict]:
    """{question id: figures} for the questions the counted learners answered in the range."""
    sql, params = _with_tables(
        _QUESTION_FIGURES_SQL,
        learners=_learner_ids(course=course, filters=filters),
        course_answers=_course_answers(course=course, filters=filters).values(
            "question_id", "user_id", "choice_id", "attempt", "is_correct"
        ),
        choices=Choice.objects.filter(question_id__in=_question_ids(course=course)).values("id", "position", "text"),
    )
    return {row["question_id"]: row for row in _fetch_dicts(sql, params)}


def question_stats_list(*, course: Course, filters: DashboardFilters) -> list[QuestionStats]:
    """Per quiz question: the first-try right rate, the average try at which learners got it right,
    and the wrong choice picked most often (ties go to the earlier choice). Two queries."""
    figures = _question_figures(course=course, filters=filters)
    questions = (
        Question.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "chapter_id", "position", "prompt", *(f"chapter__{name}" for name in _CHAPTER_FIELDS))
        .order_by("chapter__number", "position")
    )
    rows = []
    for question in questions:
        row = figures.get(question.pk, {})
        first_tries, first_try_right = row.get("first_tries", 0), row.get("first_try_right", 0)
        average_attempts = _number(row.get("average_attempts"))
        rows.append(
            QuestionStats(
                question=question,
                first_tries=first_tries,
                first_try_right=first_try_right,
                first_try_rate=_rate(first_try_right, first_tries),
                average_attempts=None if average_attempts is None else round(average_attempts, 2),
                learners=row.get("learners", 0),
                answers=row.get("answers", 0),
                top_wrong_choice=row.get("top_wrong_choice") or "",
                top_wrong_count=row.get("top_wrong_count") or 0,
            )
        )
    return rows


# The middle value of each kind of measure per exercise, or the mean of the two middle ones:
# PostgreSQL's percentile_cont sorts each group on its own; elsewhere window functions number
# the values (one sort of them all, several times slower on PostgreSQL).
_MEDIANS_BY_KIND = {
    "postgresql": """medians_by_kind AS (
    SELECT kind, exercise_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS m
    FROM measures GROUP BY kind, exercise_id
)""",
    "portable": """ranked AS (
    SELECT kind, exercise_id, v,
           ROW_NUMBER() OVER (PARTITION BY kind, exercise_id ORDER BY v) AS i,
           COUNT(*) OVER (PARTITION BY kind, exercise_id) AS c
    FROM measures
),
medians_by_kind AS (
    SELECT kind, exercise_id, AVG(v) AS m FROM ranked WHERE i IN ((c + 1) / 2, (c + 2) / 2) GROUP BY kind, exercise_id
)""",
}

_EXERCISE_FIGURES_SQL = """,
runs AS (SELECT course_runs.* FROM course_runs JOIN learners ON learners.user_id = course_runs.user_id),
per_learner AS (
    -- to_pass: how many runs the learner made up to and including their first passing one.
    SELECT exercise_id, user_id, MIN(CASE WHEN check_passed THEN n END) AS to_pass
    FROM (
        SELECT exercise_id, user_id, check_passed,
               ROW_NUMBER() OVER (PARTITION BY exercise_id, user_id ORDER BY created_at, id) AS n
        FROM runs
    ) numbered
    GROUP BY exercise_id, user_id
),
learner_figures AS (
    SELECT exercise_id, COUNT(*) AS learners_ran, COUNT(to_pass) AS learners_passed
    FROM per_learner GROUP BY exercise_id
),
run_figures AS (
    SELECT exercise_id, COUNT(*) AS runs,
           SUM(CASE WHEN timed_out THEN 1 ELSE 0 END) AS timed_out,
           SUM(CASE WHEN memory_stop THEN 1 ELSE 0 END) AS memory_stops
    FROM runs GROUP BY exercise_id
),
measures AS (
    SELECT 1 AS kind, exercise_id, to_pass AS v FROM per_learner WHERE to_pass IS NOT NULL
    UNION ALL
    SELECT 2 AS kind, exercise_id, duration_ms AS v FROM runs WHERE duration_ms IS NOT NULL
),
{medians_by_kind},
medians AS (
    SELECT exercise_id,
           AVG(CASE WHEN kind = 1 THEN m END) AS median_runs_to_pass,
           AVG(CASE WHEN kind = 2 THEN m END) AS median_duration_ms
    FROM medians_by_kind GROUP BY exercise_id
),
errors AS (
    SELECT exercise_id, error_name, COUNT(*) AS n,
           ROW_NUMBER() OVER (PARTITION BY exercise_id ORDER BY COUNT(*) DESC, error_name) AS place
    FROM runs WHERE error_name <> '' GROUP BY exercise_id, error_name
)
SELECT run_figures.*, learners_ran, learners_passed, median_runs_to_pass, median_duration_ms, error_name, n
FROM run_figures
JOIN learner_figures ON learner_figures.exercise_id = run_figures.exercise_id
LEFT JOIN medians ON medians.exercise_id = run_figures.exercise_id
LEFT JOIN errors ON errors.exercise_id = run_figures.exercise_id AND errors.place <= %s
ORDER BY run_figures.exercise_id, errors.place
"""


def _exercise_figures(*, course: Course, filters: DashboardFilters) -> dict[int, dict]:
    """{exercise id: figures} for the exercises the counted learners ran in the range, read in
    one pass over the runs; `error_types` holds the commonest error names with their counts."""
    medians = _MEDIANS_BY_KIND.get(connection.vendor, _MEDIANS_BY_KIND["portable"])
    sql, params = _with_tables(
        _EXERCISE_FIGURES_SQL.format(medians_by_kind=medians),
        learners=_learner_ids(course=course, filters=filters),
        course_runs=_course_runs(course=course, filters=filters)
        .annotate(timed_out=Q(status=Run.Status.TIMED_OUT), memory_stop=Q(reason__startswith=MEMORY_REASON_PREFIX))
        .values(
            "exercise_id",
            "user_id",
            "created_at",
            "id",
            "check_passed",
            "duration_ms",
            "error_name",
            "timed_out",
            "memory_stop",
        ),
    )
    figures: dict[int, dict] = {}
    for row in _fetch_dicts(sql, [*params, TOP_ERRORS]):
        error_name, count = row.pop("error_name"), row.pop("n")
        exercise = figures.setdefault(row["exercise_id"], {**row, "error_types": []})
        if error_name:
            exercise["error_types"].append((error_name, count))
    return figures


def exercise_stats_list(*, course: Course, filters: DashboardFilters) -> list[ExerciseStats]:
    """Per exercise: learners who ran it and who passed its check, runs, time-outs and memory
    stops, the median runs to a pass and run time, and the commonest error types. Two queries."""
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


def _failing_runs_by_exercise(*, course: Course, filters: DashboardFilters) -> QuerySet:
    """(user, exercise, failed): at least stuck_failed_runs() runs of the exercise in the range
    whose check did not pass, for anyone (the caller leaves out exercises the learner passed,
    once per row here rather than once per run, and joins the rows to the counted learners)."""
    return (
        _course_runs(course=course, filters=filters)
        .exclude(check_passed=True)
        .values("user_id", "exercise_id")
        .annotate(failed=Count("id"))
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
        "last_passes": latest(ExerciseState.objects.filter(exercise_id__in=_exercise_ids(course=course)), "passed_at"),
        "rights": latest(
            QuizAnswer.objects.filter(question_id__in=_question_ids(course=course), is_correct=True), "answered_at"
        ),
        "completions": ChapterProgress.objects.filter(chapter__course=course)
        .exclude(completed_at=None)
        .values("user_id")
        .annotate(at=Max("completed_at", filter=until_end("completed_at")), n=Count("id")),
    }


_STUCK_SQL = """,
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
),
worst AS (
    SELECT failing.user_id, failing.failed, exercises.title,
           ROW_NUMBER() OVER (
               PARTITION BY failing.user_id ORDER BY failing.failed DESC, exercises.chapter__number, failing.exercise_id
           ) AS n
    FROM failing JOIN exercises ON exercises.id = failing.exercise_id
    WHERE NOT EXISTS (
        SELECT 1 FROM passes WHERE passes.user_id = failing.user_id AND passes.exercise_id = failing.exercise_id
    )
),
stuck AS (
    SELECT progress.user_id, username, last_progress_at, worst.failed, worst.title,
           (last_progress_at < %s AND completed < (SELECT COUNT(*) FROM chapters)) AS idle
    FROM progress LEFT JOIN worst ON worst.user_id = progress.user_id AND worst.n = 1
)
SELECT user_id, username, last_progress_at, idle, COALESCE(failed, 0), COALESCE(title, ''), COUNT(*) OVER ()
FROM stuck
WHERE idle OR failed IS NOT NULL
ORDER BY failed IS NULL, last_progress_at, user_id
LIMIT %s
"""


def stuck_learner_list(*, course: Course, filters: DashboardFilters, limit: int) -> tuple[list[StuckLearner], int]:
    """Learners who look stuck, those with failing runs first, then longest without progress, and
    how many there are in all. One query: each per-learner figure is grouped once and joined to
    the learners (a correlated subquery per learner cost seconds on a large course)."""
    idle_since = filters.reference_time() - dt.timedelta(days=stuck_idle_days())
    sql, params = _with_tables(
        _STUCK_SQL.format(greatest="GREATEST" if connection.vendor == "postgresql" else "MAX"),
        learners=_enrolments(course=course, filters=filters).values("user_id", "user__username", "enrolled_at"),
        failing=_failing_runs_by_exercise(course=course, filters=filters),
        passes=ExerciseState.objects.filter(exercise_id__in=_exercise_ids(course=course))
        .exclude(passed_at=None)
        .values("user_id", "exercise_id"),
        exercises=Exercise.objects.filter(chapter__course=course).values("id", "title", "chapter__number"),
        chapters=Chapter.objects.filter(course=course).values("id"),
        **_per_learner_progress(course=course, filters=filters),
    )
    params += [connection.ops.adapt_datetimefield_value(idle_since), limit]
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
                last_progress_at=_datetime(last_progress_at),
                failed_runs=failed_runs,
                failed_exercise=failed_exercise,
                reasons=reasons,
            )
        )
    return stuck, rows[0][-1] if rows else 0


# --- CSV rows ---------------------------------------------------------------------------------------

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
    once over the course and joined to the learners."""

    def per_learner(queryset: QuerySet, **counts) -> QuerySet:
        return queryset.values("user_id").annotate(n=Count("id"), **counts)

    sql, params = _with_tables(
        _LEARNER_PROGRESS_SQL,
        learners=_enrolments(course=course, filters=filters).values(
            "user_id", "user__username", "user__email", "enrolled_at", "last_seen_at"
        ),
        completions=per_learner(
            ChapterProgress.objects.filter(
                filters.in_range("completed_at"), chapter__course=course, completed_at__isnull=False
            )
        ),
        passes=per_learner(
            ExerciseState.objects.filter(
                filters.in_range("passed_at"), exercise_id__in=_exercise_ids(course=course), passed_at__isnull=False
            )
        ),
        answers=per_learner(
            _course_answers(course=course, filters=filters),
            first_try_right=Count("id", filter=Q(attempt=1, is_correct=True)),
        ),
        runs=per_learner(
            _course_runs(course=course, filters=filters), not_passed=Count("id", filter=~Q(check_passed=True))
        ),
    )
    # A server-side cursor on PostgreSQL, as QuerySet.iterator() uses.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_size):
            for row in rows:
                yield (*row[:3], _datetime(row[3]), _datetime(row[4]), *row[5:])


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


# --- One learner ------------------------------------------------------------------------------------

RUNS_PER_PAGE = 20


@dataclass(frozen=True)
class LearnerChapterRow:
    chapter: Chapter
    exercises_total: int
    exercises_passed: int
    quiz_finished_at: dt.datetime | None
    quiz_score: int | None
    completed_at: dt.datetime | None


@dataclass(frozen=True)
class LearnerDetail:
    course: Course
    learner: User
    enrolment: Enrolment
    chapters: list[LearnerChapterRow]
    answers: list[QuizAnswer]


def learner_detail(*, course: Course, learner: User) -> LearnerDetail:
    """One learner's chapters and quiz answers in the course (runs come page by page from
    learner_run_list). Three queries."""
    enrolment = Enrolment.objects.get(course=course, user=learner)
    progress = ChapterProgress.objects.filter(user=learner, chapter=OuterRef("pk"))
    chapters = (
        Chapter.objects.filter(course=course)
        .only("id", "number", "slug", "title", "course_id")
        .annotate(
            exercises_total=Count("exercises", distinct=True),
            exercises_passed=Count(
                "exercises__states",
                filter=Q(exercises__states__user=learner, exercises__states__passed_at__isnull=False),
                distinct=True,
            ),
            quiz_finished_at=Subquery(progress.values("quiz_finished_at")[:1]),
            quiz_score=Subquery(progress.values("quiz_score")[:1]),
            completed_at=Subquery(progress.values("completed_at")[:1]),
        )
        .order_by("number")
    )
    answers = list(
        QuizAnswer.objects.filter(user=learner, question__chapter__course=course)
        .select_related("question__chapter", "choice")
        .order_by("answered_at", "id")
    )
    return LearnerDetail(
        course=course,
        learner=learner,
        enrolment=enrolment,
        chapters=[
            LearnerChapterRow(
                chapter=c,
                exercises_total=c.exercises_total,
                exercises_passed=c.exercises_passed,
                quiz_finished_at=c.quiz_finished_at,
                quiz_score=c.quiz_score,
                completed_at=c.completed_at,
            )
            for c in chapters
        ],
        answers=answers,
    )


def learner_run_list(*, course: Course, learner: User) -> QuerySet[Run]:
    """Every run of the course's exercises by the learner, newest first (paginate it)."""
    return (
        Run.objects.filter(user=learner, exercise__chapter__course=course)
        .select_related("exercise__chapter")
        .order_by("-created_at", "id")
    )

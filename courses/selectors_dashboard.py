"""Reads for the instructor dashboards: who may teach a course, and every figure a dashboard shows.

Access: a course's instructors and admins see its dashboards; anyone else is answered 404 as if
the course did not exist (courses.selectors' rule).

Every figure is computed by the database (aggregates, annotations, window functions), one query
per block of the page, so a dashboard costs the same number of queries for ten learners or ten
thousand. Python only loops over a course's chapters, questions and exercises, never its learners.

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
    Avg,
    Count,
    DateTimeField,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    Window,
)
from django.db.models.functions import Coalesce, Greatest, RowNumber
from django.http import Http404
from django.utils import timezone

from accounts.models import User
from courses.models import (
    Chapter,
    ChapterProgress,
    Cohort,
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
        enrolments = enrolments.filter(user__cohort_memberships__cohort=filters.cohort)
    if filters.end_before is not None:
        enrolments = enrolments.filter(enrolled_at__lt=filters.end_before)
    return enrolments


def _learner_ids(*, course: Course, filters: DashboardFilters) -> QuerySet:
    return _enrolments(course=course, filters=filters).values("user_id")


def _course_runs(*, course: Course, filters: DashboardFilters) -> QuerySet[Run]:
    """Finished runs of the course's exercises by the counted learners, in the range."""
    return Run.objects.filter(
        filters.in_range("created_at"),
        exercise__chapter__course=course,
        status__in=Run.TERMINAL,
        user_id__in=_learner_ids(course=course, filters=filters),
    )


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _number(value) -> float | None:
    if value is None:
        return None
    return float(value) if isinstance(value, Decimal | float) else value


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


def _answers(*, course: Course, filters: DashboardFilters) -> QuerySet[QuizAnswer]:
    return QuizAnswer.objects.filter(
        filters.in_range("answered_at"),
        question__chapter__course=course,
        user_id__in=_learner_ids(course=course, filters=filters),
    )


def question_stats_list(*, course: Course, filters: DashboardFilters) -> list[QuestionStats]:
    """Per quiz question: the first-try right rate, the average try at which learners got it right,
    and the wrong choice picked most often (ties go to the earlier choice). Two queries."""
    counted = Q(answers__user_id__in=_learner_ids(course=course, filters=filters)) & filters.in_range(
        "answers__answered_at"
    )
    questions = (
        Question.objects.filter(chapter__course=course)
        .select_related("chapter")
        .annotate(
            first_tries=Count("answers", filter=counted & Q(answers__attempt=1)),
            first_try_right=Count("answers", filter=counted & Q(answers__attempt=1, answers__is_correct=True)),
            # A learner's right answer ends their tries at a question, so its attempt number is
            # how many tries they took.
            average_attempts=Avg("answers__attempt", filter=counted & Q(answers__is_correct=True)),
            learners=Count("answers__user", filter=counted, distinct=True),
            answer_count=Count("answers", filter=counted),
        )
        .order_by("chapter__number", "position")
    )
    top_wrong = {
        row["question_id"]: row
        for row in _answers(course=course, filters=filters)
        .filter(is_correct=False)
        .values("question_id", "choice_id", "choice__text", "choice__position")
        .annotate(picked=Count("id"))
        .annotate(
            rank=Window(
                RowNumber(), partition_by=[F("question_id")], order_by=[F("picked").desc(), F("choice__position").asc()]
            )
        )
        .order_by()
        .filter(rank=1)
    }
    rows = []
    for question in questions:
        wrong = top_wrong.get(question.pk, {})
        rows.append(
            QuestionStats(
                question=question,
                first_tries=question.first_tries,
                first_try_right=question.first_try_right,
                first_try_rate=_rate(question.first_try_right, question.first_tries),
                average_attempts=round(_number(question.average_attempts), 2)
                if question.average_attempts is not None
                else None,
                learners=question.learners,
                answers=question.answer_count,
                top_wrong_choice=wrong.get("choice__text", ""),
                top_wrong_count=wrong.get("picked", 0),
            )
        )
    return rows


_MEDIANS_SQL = """
WITH r AS ({runs}),
numbered AS (
    SELECT exercise_id, user_id, check_passed,
           ROW_NUMBER() OVER (PARTITION BY exercise_id, user_id ORDER BY created_at, id) AS n
    FROM r
),
vals AS (
    SELECT 1 AS kind, exercise_id, MIN(n) AS v FROM numbered WHERE check_passed GROUP BY exercise_id, user_id
    UNION ALL
    SELECT 2 AS kind, exercise_id, duration_ms AS v FROM r WHERE duration_ms IS NOT NULL
),
ranked AS (
    SELECT kind, exercise_id, v,
           ROW_NUMBER() OVER (PARTITION BY kind, exercise_id ORDER BY v) AS i,
           COUNT(*) OVER (PARTITION BY kind, exercise_id) AS c
    FROM vals
)
SELECT kind, exercise_id, AVG(v) FROM ranked WHERE i IN ((c + 1) / 2, (c + 2) / 2) GROUP BY kind, exercise_id
"""


def _exercise_medians(*, course: Course, filters: DashboardFilters) -> dict[tuple[int, int], float]:
    """{(kind, exercise_id): median}: kind 1 is the runs a learner made up to and including their
    first passing run; kind 2 the run time in ms. The median is the middle value (the mean of the
    two middle ones), found with window functions, so the same SQL runs on PostgreSQL and SQLite."""
    runs = (
        _course_runs(course=course, filters=filters)
        .values("id", "exercise_id", "user_id", "created_at", "check_passed", "duration_ms")
        .order_by()
    )
    sql, params = runs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(_MEDIANS_SQL.format(runs=sql), params)
        return {(kind, exercise_id): float(value) for kind, exercise_id, value in cursor.fetchall()}


def exercise_stats_list(*, course: Course, filters: DashboardFilters) -> list[ExerciseStats]:
    """Per exercise: learners who ran it and who passed its check, runs, time-outs and memory
    stops, the median runs to a pass and run time, and the commonest error types. Three queries."""
    counted = Q(
        runs__user_id__in=_learner_ids(course=course, filters=filters), runs__status__in=Run.TERMINAL
    ) & filters.in_range("runs__created_at")
    exercises = (
        Exercise.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "slug", "title", "position", "chapter__id", "chapter__number", "chapter__title", "chapter__slug")
        .annotate(
            learners_ran=Count("runs__user", filter=counted, distinct=True),
            learners_passed=Count("runs__user", filter=counted & Q(runs__check_passed=True), distinct=True),
            run_count=Count("runs", filter=counted),
            timed_out=Count("runs", filter=counted & Q(runs__status=Run.Status.TIMED_OUT)),
            memory_stops=Count("runs", filter=counted & Q(runs__reason__startswith=MEMORY_REASON_PREFIX)),
        )
        .order_by("chapter__number", "position")
    )
    medians = _exercise_medians(course=course, filters=filters)
    errors: dict[int, list[tuple[str, int]]] = {}
    for row in (
        _course_runs(course=course, filters=filters)
        .exclude(error_name="")
        .values("exercise_id", "error_name")
        .annotate(n=Count("id"))
        .annotate(rank=Window(RowNumber(), partition_by=[F("exercise_id")], order_by=[F("n").desc(), F("error_name")]))
        .order_by()
        .filter(rank__lte=TOP_ERRORS)
        .order_by("exercise_id", "rank")
    ):
        errors.setdefault(row["exercise_id"], []).append((row["error_name"], row["n"]))
    return [
        ExerciseStats(
            exercise=exercise,
            learners_ran=exercise.learners_ran,
            learners_passed=exercise.learners_passed,
            pass_rate=_rate(exercise.learners_passed, exercise.learners_ran),
            runs=exercise.run_count,
            timed_out=exercise.timed_out,
            memory_stops=exercise.memory_stops,
            median_runs_to_pass=medians.get((1, exercise.pk)),
            median_duration_ms=medians.get((2, exercise.pk)),
            error_types=errors.get(exercise.pk, []),
        )
        for exercise in exercises
    ]


def _failing_runs_by_exercise(*, course: Course, filters: DashboardFilters) -> QuerySet:
    """(user, exercise, failed) for exercises the learner has not passed, with at least
    stuck_failed_runs() runs whose check did not pass."""
    passed = ExerciseState.objects.filter(user_id=OuterRef("user_id"), exercise_id=OuterRef("exercise_id")).exclude(
        passed_at=None
    )
    return (
        _course_runs(course=course, filters=filters)
        .exclude(check_passed=True)
        .filter(~Exists(passed))
        .values("user_id", "exercise_id")
        .annotate(failed=Count("id"))
        .filter(failed__gte=stuck_failed_runs())
    )


def _last_progress(*, course: Course, filters: DashboardFilters):
    """The latest progress a learner made in the course (a pass, a right answer, a completed
    chapter), or their enrolment when they made none, up to the end of the range."""

    def latest(model, *, when: str, user_lookup: str, **conditions):
        rows = model.objects.filter(**{user_lookup: OuterRef("user_id")}, **conditions).exclude(**{when: None})
        if filters.end_before:
            rows = rows.filter(**{f"{when}__lt": filters.end_before})
        return Subquery(rows.order_by(f"-{when}").values(when)[:1], output_field=DateTimeField())

    return Greatest(
        F("enrolled_at"),
        Coalesce(
            latest(ExerciseState, when="passed_at", user_lookup="user_id", exercise__chapter__course=course),
            F("enrolled_at"),
        ),
        Coalesce(
            latest(
                QuizAnswer, when="answered_at", user_lookup="user_id", question__chapter__course=course, is_correct=True
            ),
            F("enrolled_at"),
        ),
        Coalesce(
            latest(ChapterProgress, when="completed_at", user_lookup="user_id", chapter__course=course),
            F("enrolled_at"),
        ),
    )


def stuck_learner_list(*, course: Course, filters: DashboardFilters, limit: int) -> tuple[list[StuckLearner], int]:
    """Learners who look stuck, those with failing runs first, then longest without progress, and
    how many there are in all. Two queries."""
    failing = _failing_runs_by_exercise(course=course, filters=filters)
    idle_since = filters.reference_time() - dt.timedelta(days=stuck_idle_days())
    chapter_count = Chapter.objects.filter(course=course).values("course").annotate(n=Count("id")).values("n")
    completed = (
        ChapterProgress.objects.filter(user_id=OuterRef("user_id"), chapter__course=course)
        .exclude(completed_at=None)
        .values("user_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    worst = failing.filter(user_id=OuterRef("user_id")).order_by("-failed", "exercise__chapter__number")
    stuck_rows = (
        _enrolments(course=course, filters=filters)
        .annotate(
            last_progress_at=_last_progress(course=course, filters=filters),
            chapters_completed=Coalesce(Subquery(completed, output_field=IntegerField()), Value(0)),
            chapter_count=Subquery(chapter_count, output_field=IntegerField()),
        )
        .annotate(
            idle=Q(last_progress_at__lt=idle_since) & Q(chapters_completed__lt=F("chapter_count")),
            # Exists, not user_id IN (...): the planner cannot hash the grouped subquery and would
            # scan it once per learner.
            failing=Exists(failing.filter(user_id=OuterRef("user_id"))),
        )
        .filter(Q(idle=True) | Q(failing=True))
    )
    total = stuck_rows.count()
    # The failing runs are looked up for the learners shown only (ordering or counting by them
    # would compute them for every stuck learner).
    rows = (
        stuck_rows.annotate(
            failed_runs=Coalesce(Subquery(worst.values("failed")[:1], output_field=IntegerField()), Value(0)),
            failed_exercise=Subquery(worst.values("exercise__title")[:1]),
        )
        .values("user_id", "user__username", "last_progress_at", "idle", "failed_runs", "failed_exercise")
        .order_by("-failing", "last_progress_at", "user_id")[:limit]
    )
    stuck = []
    for row in rows:
        reasons = []
        if row["failed_runs"]:
            reasons.append(f"{row['failed_runs']} runs of “{row['failed_exercise']}” without a pass")
        if row["idle"]:
            reasons.append(f"no progress for {stuck_idle_days()}+ days")
        stuck.append(
            StuckLearner(
                user_id=row["user_id"],
                username=row["user__username"],
                last_progress_at=row["last_progress_at"],
                failed_runs=row["failed_runs"],
                failed_exercise=row["failed_exercise"] or "",
                reasons=reasons,
            )
        )
    return stuck, total


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


def learner_progress_rows(*, course: Course, filters: DashboardFilters, chunk_size: int = 2000):
    """One tuple per counted learner (LEARNER_CSV_HEADER), read from a server-side cursor in
    chunks so an export of any size holds one chunk in memory."""

    def count(queryset) -> Coalesce:
        rows = queryset.filter(user_id=OuterRef("user_id")).values("user_id").annotate(n=Count("id")).values("n")
        return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))

    runs = Run.objects.filter(filters.in_range("created_at"), exercise__chapter__course=course, status__in=Run.TERMINAL)
    answers = QuizAnswer.objects.filter(filters.in_range("answered_at"), question__chapter__course=course)
    rows = (
        _enrolments(course=course, filters=filters)
        .annotate(
            chapters_completed=count(
                ChapterProgress.objects.filter(
                    filters.in_range("completed_at"), chapter__course=course, completed_at__isnull=False
                )
            ),
            exercises_passed=count(
                ExerciseState.objects.filter(
                    filters.in_range("passed_at"), exercise__chapter__course=course, passed_at__isnull=False
                )
            ),
            quiz_answers=count(answers),
            quiz_first_try_right=count(answers.filter(attempt=1, is_correct=True)),
            run_count=count(runs),
            runs_not_passed=count(runs.exclude(check_passed=True)),
        )
        .order_by("user__username")
        .values_list(
            "user_id",
            "user__username",
            "user__email",
            "enrolled_at",
            "last_seen_at",
            "chapters_completed",
            "exercises_passed",
            "quiz_answers",
            "quiz_first_try_right",
            "run_count",
            "runs_not_passed",
        )
    )
    yield from rows.iterator(chunk_size=chunk_size)


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

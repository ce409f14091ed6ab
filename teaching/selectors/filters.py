"""What every dashboard read starts from: the filters (cohort and date range) and the learners they
count, and the small SQL helpers the figures share (who may read them: teaching/selectors/access.py).

Filters (cohort and date range) apply to everything:
- the learners counted are those enrolled before the end of the range, in the cohort if one is set;
- events (runs, quiz answers, chapter completions, passes) count when they happened in the range,
  read from the counts of the learners enrolled (in the cohort) now: a learner enrolled after the
  range's end has no events in it, unless they acted before enrolling (an instructor trying the
  course is never counted);
- "active" means seen in the ACTIVE_DAYS before the end of the range (now, with no end).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Count, Q, QuerySet, Subquery
from django.http import Http404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from courses.models import Course, Enrolment, Exercise, Question
from teaching.models import NO_DAY, ChapterSummary, Cohort, CohortMembership, ExerciseSummary


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
CHAPTER_COLUMNS = ("id", "number", "slug", "title")
TOP_ERRORS = 3


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


def reaches_today(filters: DashboardFilters) -> bool:
    """Whether the range, if any, runs to today or later. Such a range counts everyone enrolled now
    with their progress up to now, which each learner's standing holds (the stuck list) and the
    course's or cohort's counts (the funnel's "started"); a range that ended earlier counts the
    learners enrolled by its end (the starters by the day they enrolled, the standings by their
    enrolment time), as of its end."""
    return filters.end is None or filters.end >= timezone.now().astimezone(dt.UTC).date()


def reads_whole_history(*, course: Course, filters: DashboardFilters) -> bool:
    """Whether the filters' date range, if any, leaves out nothing the course's learners did: from
    at most the first day of a run or an answer (every pass and completion follows one) to at least
    today. Such a range counts what no range counts, and the dashboard reads its counts."""
    if not reaches_today(filters):
        return False
    if filters.start is not None:

        def first(model) -> Subquery:
            return Subquery(model.objects.filter(course=course).order_by("day").values("day")[:1])

        days = Course.objects.filter(pk=course.pk).values_list(first(ExerciseSummary), first(ChapterSummary)).get()
        return all(day is None or filters.start <= day for day in days)
    return True


def enrolments_of(*, course: Course, filters: DashboardFilters) -> QuerySet[Enrolment]:
    """The learners a dashboard counts."""
    enrolments = Enrolment.objects.filter(course=course)
    if filters.cohort is not None:
        enrolments = enrolments.filter(
            user_id__in=CohortMembership.objects.filter(cohort=filters.cohort).values("user_id")
        )
    if filters.end_before is not None:
        enrolments = enrolments.filter(enrolled_at__lt=filters.end_before)
    return enrolments


def learner_ids_of(*, course: Course, filters: DashboardFilters) -> QuerySet:
    return enrolments_of(course=course, filters=filters).values("user_id")


def exercise_ids_of(*, course: Course) -> QuerySet:
    return Exercise.objects.filter(chapter__course=course).values("id")


def question_ids_of(*, course: Course) -> QuerySet:
    return Question.objects.filter(chapter__course=course).values("id")


def summaries_of(model, *, course: Course, filters: DashboardFilters) -> QuerySet:
    """The course's summary rows (teaching.models) for the days in the range, of anyone: callers
    join them to the counted learners, as they do runs. A day is the filter's unit, so the rows
    of the range's days hold exactly the events in it."""
    summaries = model.objects.filter(course=course)
    if filters.start is not None:
        summaries = summaries.filter(day__gte=filters.start)
    if filters.end is not None:
        summaries = summaries.filter(day__lte=filters.end)
    return summaries


def day_counts_of(model, *, course: Course, filters: DashboardFilters) -> QuerySet:
    """The course's or the cohort's day counts (teaching.models) for the days in the range."""
    return summaries_of(model, course=course, filters=filters).filter(cohort=filters.cohort)


def range_start(filters: DashboardFilters) -> dt.date:
    """The range's first day, or the day after NO_DAY: a day count's learner counts in the range
    when its `prev_day` comes before this (teaching.models.ExerciseDayCount)."""
    return filters.start or NO_DAY + dt.timedelta(days=1)


def fetch_dicts(sql: str, params: list) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [column[0] for column in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def rate_of(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def as_number(value) -> float | None:
    if value is None:
        return None
    return float(value) if isinstance(value, Decimal | float) else value


def as_datetime(value) -> dt.datetime | None:
    """A timestamp read by raw SQL, aware: PostgreSQL gives aware datetimes; SQLite gives text for
    a computed value and a naive datetime (UTC) for a column read as it is."""
    if isinstance(value, str):
        value = parse_datetime(value)
    return value if value is None or timezone.is_aware(value) else timezone.make_aware(value, dt.UTC)


def with_tables(sql: str, **tables: QuerySet) -> tuple[str, list]:
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

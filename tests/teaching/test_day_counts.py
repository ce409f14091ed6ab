"""The course's and cohorts' counts per day (teaching.models.ExerciseDayCount and siblings): a
dashboard with a date range that reaches today sums them over the range's days, and shows what the
per-learner path computes from the learners' own summaries; where the two paths define a figure
differently (runs to a pass, run time), the figure is checked against its definition."""

import datetime as dt
import statistics
from collections import defaultdict

import pytest
from django.utils import timezone

from courses.models import Enrolment, ExerciseState
from teaching.models import ExerciseSummary, ExerciseTimeDayCount
from teaching.selectors.course import (
    _exercise_figures_from_day_counts,
    chapter_funnel,
    exercise_stats_list,
)
from teaching.selectors.filters import DashboardFilters, learner_ids_of
from teaching.selectors.stuck import _stuck_in_range, stuck_learner_list
from teaching.services.course_counts import _two_figures
from teaching.services.course_data import course_data_generate
from teaching.services.standings import standings_rebuild
from tests.teaching import reference
from tests.teaching.conftest import _finish, _run

# Figures both paths define alike.
SHARED = ("runs", "timed_out", "memory_stops", "learners_ran", "learners_passed", "error_types")


def _today() -> dt.date:
    return timezone.now().astimezone(dt.UTC).date()


def _shared(figures: dict) -> dict:
    return {exercise: {name: row[name] for name in SHARED} for exercise, row in figures.items() if row["learners_ran"]}


def _summaries_in(*, course, filters) -> dict:
    """{exercise: {learner: [their summaries in the range, oldest first]}} of the counted learners."""
    rows = ExerciseSummary.objects.filter(
        course=course, day__gte=filters.start, user_id__in=learner_ids_of(course=course, filters=filters)
    ).order_by("day")
    if filters.end is not None:
        rows = rows.filter(day__lte=filters.end)
    by_exercise: dict = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_exercise[row.exercise_id][row.user_id].append(row)
    return by_exercise


def _expected_medians(*, course, filters) -> dict:
    """By the definitions: runs to the first pass of learners whose first pass ever fell in the
    range; the learners' mean run time on each of their days in the range, to two figures."""
    medians = {}
    for exercise_id, learners in _summaries_in(course=course, filters=filters).items():
        to_pass, means = [], []
        for learner_id, days in learners.items():
            first = (
                ExerciseSummary.objects.filter(user_id=learner_id, exercise_id=exercise_id, passes__gt=0)
                .order_by("day")
                .first()
            )
            if first is not None and filters.start <= first.day <= (filters.end or first.day):
                to_pass.append(first.first_pass_number)
            means += [
                _two_figures((2 * day.duration_total_ms + day.timed_runs) // (2 * day.timed_runs))
                for day in days
                if day.timed_runs
            ]
        medians[exercise_id] = (
            statistics.median(to_pass) if to_pass else None,
            statistics.median(means) if means else None,
        )
    return medians


def _medians(figures: dict) -> dict:
    def number(value):
        return None if value is None else float(value)

    return {
        exercise: (number(row["median_runs_to_pass"]), number(row["median_duration_ms"]))
        for exercise, row in figures.items()
        if row["learners_ran"]
    }


@pytest.mark.django_db
def test_a_range_sums_the_day_counts_to_the_learners_figures(settings):
    # Stuck learners on a small course, some idle at a range's end who came back after it.
    settings.DASHBOARD_STUCK_FAILED_RUNS, settings.DASHBOARD_STUCK_IDLE_DAYS = 3, 2
    made = course_data_generate(slug="days", learners=60, chapters=3, runs=900, seed=11)
    course, cohorts = made.course, list(made.course.cohorts.all())
    checked = 0
    ranges = [*((days, None) for days in (3, 20, 45, 200)), (45, 10), (200, 30), (60, 59)]  # days ago
    for start, end in ((_today() - dt.timedelta(days=s), e and _today() - dt.timedelta(days=e)) for s, e in ranges):
        for cohort in (None, *cohorts):
            filters = DashboardFilters(cohort=cohort, start=start, end=end)
            from_days = _exercise_figures_from_day_counts(course=course, filters=filters)
            assert _shared(from_days) == _shared(reference.exercise_figures(course=course, filters=filters))
            assert _medians(from_days) == _expected_medians(course=course, filters=filters)
            funnel = chapter_funnel(course=course, filters=filters, enrolled=60, whole_history=False)
            per_learner = reference.chapter_funnel(course=course, filters=filters)
            assert [(c.started, c.quiz_finished, c.completed) for c in funnel] == [
                (c.started, c.quiz_finished, c.completed) for c in per_learner
            ]
            stuck = _stuck_in_range(course=course, filters=filters, limit=1000)
            assert stuck == reference.stuck_learner_list(course=course, filters=filters, limit=1000)
            checked += bool(from_days) + bool(stuck[1])
    assert checked > 20  # the ranges held runs and stuck learners


def test_a_learner_who_passed_before_the_range_counts_as_passing_in_it_but_not_in_runs_to_pass(hand_course):
    course, ann, e1 = hand_course.course, hand_course.ann, hand_course.e1
    now = timezone.now()
    # ann passed e1 today (her 2nd run); bob ten days ago failed twice, then passed today.
    for minutes, passed in ((30, False), (20, True)):
        _finish(_run(user=ann, exercise=e1, at=now + dt.timedelta(days=3, minutes=minutes), passed=passed))
    later = DashboardFilters(start=_today() + dt.timedelta(days=3))
    (e1_later, _) = exercise_stats_list(course=course, filters=later)
    assert (e1_later.runs, e1_later.learners_ran, e1_later.learners_passed) == (2, 1, 1)
    assert e1_later.median_runs_to_pass is None  # her first pass came before the range

    yesterday = DashboardFilters(start=_today() - dt.timedelta(days=1))
    (e1_recent, _) = exercise_stats_list(course=course, filters=yesterday)
    # ann's first pass at run 2 and bob's at run 4 fall in the range (bob's earlier runs count).
    assert (e1_recent.learners_passed, e1_recent.median_runs_to_pass) == (2, 3.0)


def test_the_run_time_in_a_range_is_the_median_of_each_learner_days_mean(hand_course):
    course, e1 = hand_course.course, hand_course.e1
    recent = DashboardFilters(start=_today() - dt.timedelta(days=1))
    # Today: ann (100, 200) 150, bob (20000, 500) 10250 -> 10000 to two figures, cat (600..800) 700.
    assert sorted(
        ExerciseTimeDayCount.objects.filter(exercise=e1, cohort=None, day__gte=recent.start).values_list(
            "mean_ms", "learners"
        )
    ) == [(150, 1), (700, 1), (10000, 1)]
    (e1_recent, _) = exercise_stats_list(course=course, filters=recent)
    assert e1_recent.median_duration_ms == 700.0


@pytest.mark.parametrize(
    "ms, kept", [(7, 7), (99, 99), (100, 100), (149, 150), (994, 990), (995, 1000), (12345, 12000)]
)
def test_a_days_mean_run_time_is_kept_to_two_significant_figures(ms, kept):
    assert _two_figures(ms) == kept


def test_a_learner_enrolling_brings_their_days_and_leaving_takes_them(hand_course, make_user):
    course, e1 = hand_course.course, hand_course.e1
    recent = DashboardFilters(start=_today() - dt.timedelta(days=1))
    (before, _) = exercise_stats_list(course=course, filters=recent)
    eve = make_user(username="eve")
    for minutes, passed in ((20, False), (19, True)):
        _finish(_run(user=eve, exercise=e1, at=timezone.now() - dt.timedelta(minutes=minutes), passed=passed))
    enrolment = Enrolment.objects.create(user=eve, course=course)
    (after, _) = exercise_stats_list(course=course, filters=recent)
    assert (after.runs, after.learners_ran, after.learners_passed) == (
        before.runs + 2,
        before.learners_ran + 1,
        before.learners_passed + 1,
    )
    enrolment.delete()
    (gone, _) = exercise_stats_list(course=course, filters=recent)
    assert gone == before


def test_a_learner_idle_at_a_past_ranges_end_who_came_back_since_is_listed_as_of_then(hand_course, make_user):
    course, now = hand_course.course, timezone.now()
    eve = make_user(username="eve")
    Enrolment.objects.create(user=eve, course=course)
    Enrolment.objects.filter(user=eve).update(enrolled_at=now - dt.timedelta(days=20))
    ExerciseState.objects.create(user=eve, exercise=hand_course.e1, passed_at=now - dt.timedelta(days=19), code="")
    ExerciseState.objects.create(user=eve, exercise=hand_course.e2, passed_at=now, code="")  # back today
    standings_rebuild(course=course)
    ended = DashboardFilters(end=(now - dt.timedelta(days=3)).date())
    listed, total = stuck_learner_list(course=course, filters=ended, limit=50)
    (as_then,) = (row for row in listed if row.username == "eve")
    assert as_then.last_progress_at == now - dt.timedelta(days=19)
    assert as_then.reasons == ["no progress for 14+ days"]
    assert (listed, total) == reference.stuck_learner_list(course=course, filters=ended, limit=50)
    # Today she is not stuck.
    assert "eve" not in {
        row.username for row in stuck_learner_list(course=course, filters=DashboardFilters(), limit=50)[0]
    }

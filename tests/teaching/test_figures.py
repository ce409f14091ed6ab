"""The dashboard figures on the hand-built course (tests/teaching/conftest.py), checked exactly."""

import datetime as dt

import pytest
from django.core.exceptions import ValidationError

from teaching.selectors import DashboardFilters, course_dashboard, dashboard_filters_from_params

pytestmark = pytest.mark.django_db


def _dashboard(hand, **filters):
    return course_dashboard(course=hand.course, filters=DashboardFilters(**filters))


def test_it_counts_enrolled_and_recently_active_learners(hand_course):
    board = _dashboard(hand_course)
    assert board.enrolled == 4
    assert board.active == 3  # ann, bob today, cat 3 days ago; dan 30 days ago


def test_it_shows_completion_per_chapter_as_a_funnel(hand_course):
    funnel = _dashboard(hand_course).funnel
    assert [(row.chapter.number, row.started, row.quiz_finished, row.completed) for row in funnel] == [
        (1, 3, 3, 2),
        (2, 1, 0, 1),
    ]
    assert [row.completed_rate for row in funnel] == [0.5, 0.25]


def test_it_gives_each_question_its_first_try_rate_attempts_and_commonest_wrong_answer(hand_course):
    (q1,) = _dashboard(hand_course).questions
    assert (q1.first_tries, q1.first_try_right) == (3, 1)
    assert q1.first_try_rate == 0.3333
    assert q1.average_attempts == 2.0  # right at tries 1, 3 and 2
    assert (q1.top_wrong_choice, q1.top_wrong_count) == ("B", 2)
    assert (q1.learners, q1.answers) == (3, 6)


def test_it_gives_each_exercise_its_pass_rate_runs_to_pass_errors_and_limits(hand_course):
    e1, e2 = _dashboard(hand_course).exercises
    assert (e1.learners_ran, e1.learners_passed, e1.pass_rate) == (3, 2, 0.6667)
    assert e1.runs == 9
    assert e1.median_runs_to_pass == 3.0  # ann passed at her 2nd run, bob at his 4th
    # The learners' mean run times: ann (100, 200) 150, bob (300, 400, 20000, 500) 5300, cat (600..800) 700.
    assert e1.median_duration_ms == 700.0
    assert e1.error_types == [("NameError", 4), ("ValueError", 1)]
    assert (e1.timed_out, e1.memory_stops) == (1, 1)
    assert (e2.learners_ran, e2.pass_rate, e2.median_runs_to_pass, e2.error_types) == (0, None, None, [])


def test_it_lists_learners_who_look_stuck(hand_course):
    board = _dashboard(hand_course)
    assert board.stuck_total == 2
    cat, dan = board.stuck
    assert (cat.username, cat.failed_runs, cat.failed_exercise) == ("cat", 3, "Exercise one")
    assert (dan.username, dan.failed_runs) == ("dan", 0)
    assert dan.reasons == ["no progress for 14+ days"]


def test_it_counts_only_the_chosen_cohort(hand_course):
    board = _dashboard(hand_course, cohort=hand_course.morning)
    assert (board.enrolled, board.active) == (2, 2)
    (q1,) = board.questions
    assert (q1.first_tries, q1.first_try_rate, q1.average_attempts) == (2, 0.5, 2.0)
    assert (q1.top_wrong_choice, q1.top_wrong_count) == ("B", 1)  # B and C once each: the earlier choice
    e1 = board.exercises[0]
    assert (e1.learners_ran, e1.pass_rate, e1.median_runs_to_pass, e1.timed_out, e1.memory_stops) == (2, 1.0, 3.0, 1, 0)
    assert [(row.started, row.completed) for row in board.funnel] == [(2, 2), (1, 1)]
    assert board.stuck_total == 0


def test_it_counts_only_events_in_the_date_range(hand_course):
    day = (hand_course.now - dt.timedelta(days=10)).date()
    board = _dashboard(hand_course, start=day - dt.timedelta(days=2), end=day + dt.timedelta(days=2))
    assert board.enrolled == 4  # everyone had enrolled by then
    e1 = board.exercises[0]
    assert (e1.learners_ran, e1.learners_passed, e1.runs) == (1, 0, 2)  # bob's two early runs
    assert e1.error_types == [("NameError", 1), ("ValueError", 1)]
    assert board.questions[0].first_tries == 0 and board.questions[0].first_try_rate is None
    assert [row.completed for row in board.funnel] == [0, 0]


def test_it_leaves_out_learners_enrolled_after_the_range(hand_course):
    day = (hand_course.now - dt.timedelta(days=25)).date()
    board = _dashboard(hand_course, end=day)
    assert board.enrolled == 1  # dan


def test_it_refuses_bad_filters(hand_course):
    with pytest.raises(ValidationError) as error:
        dashboard_filters_from_params(
            course=hand_course.course, params={"cohort": "999", "start": "yesterday", "end": "2024-01-01"}
        )
    assert set(error.value.message_dict) == {"cohort", "start"}
    with pytest.raises(ValidationError):
        dashboard_filters_from_params(course=hand_course.course, params={"start": "2024-02-01", "end": "2024-01-01"})
    filters = dashboard_filters_from_params(course=hand_course.course, params={"cohort": str(hand_course.morning.pk)})
    assert filters.cohort == hand_course.morning

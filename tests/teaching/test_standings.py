"""Each learner's standing in a course (teaching.models.LearnerStanding): kept as runs finish,
answers are saved and progress is made, it gives the stuck learners the per-learner path groups
from every summary, pass and completion."""

import datetime as dt

import pytest
from django.utils import timezone

from courses.models import Choice, Enrolment, Question
from courses.services.progress import exercise_record_pass
from courses.services.quizzes import quiz_answer
from runner.models import Run
from teaching.models import LearnerStanding
from teaching.selectors.filters import DashboardFilters
from teaching.selectors.stuck import _stuck_from_standings
from teaching.services.course_data import course_data_generate
from teaching.services.standings import standings_rebuild
from tests.teaching import reference
from tests.teaching.conftest import _finish, _run

FIELDS = ("user_id", "enrolled_at", "progress_at", "completed_chapters", "failing_exercise_id", "failing_runs")


def _standings(course) -> list:
    return sorted(LearnerStanding.objects.filter(course=course).values_list(*FIELDS))


def _rebuilt(course) -> list:
    standings_rebuild(course=course)
    return _standings(course)


def _both(course, filters, limit=1000):
    return (
        _stuck_from_standings(course=course, filters=filters, limit=limit),
        reference.stuck_learner_list(course=course, filters=filters, limit=limit),
    )


@pytest.mark.django_db
@pytest.mark.parametrize("failed_runs, idle_days", [(8, 14), (3, 2), (1, 30)])
def test_standings_list_the_learners_the_summaries_list(settings, failed_runs, idle_days):
    settings.DASHBOARD_STUCK_FAILED_RUNS, settings.DASHBOARD_STUCK_IDLE_DAYS = failed_runs, idle_days
    made = course_data_generate(slug="standings", learners=80, chapters=3, runs=1500, seed=7)
    for cohort in (None, *made.course.cohorts.all()):
        (listed, total), (expected, expected_total) = _both(made.course, DashboardFilters(cohort=cohort))
        assert total == expected_total > 0
        assert listed == expected


def test_the_hand_course_lists_cat_for_failing_and_dan_for_idling(hand_course):
    (listed, total), _ = _both(hand_course.course, DashboardFilters())
    assert total == 2
    assert [(row.username, row.failed_runs, row.failed_exercise) for row in listed] == [
        ("cat", 3, "Exercise one"),
        ("dan", 0, ""),
    ]


def test_runs_passes_answers_and_completions_keep_the_standing(hand_course, settings):
    settings.DASHBOARD_STUCK_FAILED_RUNS = 2
    course, e1, e2, dan = hand_course.course, hand_course.e1, hand_course.e2, hand_course.dan
    now = timezone.now()
    for minutes in (9, 8):
        failing = _run(user=dan, exercise=e1, at=now - dt.timedelta(minutes=minutes), passed=False)
        _finish(failing)
    standing = LearnerStanding.objects.get(course=course, user=dan)
    enrolled_at = standing.enrolment.enrolled_at
    assert (standing.failing_exercise_id, standing.failing_runs, standing.progress_at) == (e1.pk, 2, enrolled_at)
    (listed, _), _ = _both(course, DashboardFilters())
    assert ("dan", 2) in [(row.username, row.failed_runs) for row in listed]

    # A right answer is progress; the quiz of Part 1 finished is not yet a completed chapter.
    question = Question.objects.get(pk=hand_course.q1.pk)
    quiz_answer(user=dan, question=question, choice=Choice.objects.get(question=question, text="A"))
    standing.refresh_from_db()
    assert standing.progress_at > enrolled_at and standing.completed_chapters == 0

    # A pass of e1 ends its failing and, with the quiz done, completes Part 1.
    _finish(_run(user=dan, exercise=e1, at=now - dt.timedelta(minutes=1), passed=True))
    exercise_record_pass(user=dan, exercise=e1)
    standing.refresh_from_db()
    assert (standing.failing_exercise_id, standing.failing_runs, standing.completed_chapters) == (None, 0, 1)
    assert _standings(course) == _rebuilt(course)
    assert dan.pk not in [row.user_id for row in _both(course, DashboardFilters())[0][0]]

    # Part 2 has no quiz: passing e2 completes it.
    exercise_record_pass(user=dan, exercise=e2)
    assert LearnerStanding.objects.get(course=course, user=dan).completed_chapters == 2
    assert _standings(course) == _rebuilt(course)


def test_a_learner_who_did_nothing_is_idle_from_enrolling(hand_course, make_user, settings):
    settings.DASHBOARD_STUCK_IDLE_DAYS = 1
    eve = make_user(username="eve")
    enrolment = Enrolment.objects.create(user=eve, course=hand_course.course)
    assert LearnerStanding.objects.get(user=eve).progress_at == enrolment.enrolled_at
    # Three days on (enrolled_at is set on create only: moved by hand, the standings are rebuilt).
    Enrolment.objects.filter(user=eve).update(enrolled_at=timezone.now() - dt.timedelta(days=3))
    standings_rebuild(course=hand_course.course)
    (listed, _), (expected, _) = _both(hand_course.course, DashboardFilters())
    assert listed == expected
    assert "eve" in [row.username for row in listed]


def test_a_failed_run_of_a_learner_not_yet_enrolled_stands_when_they_enrol(hand_course, make_user, settings):
    settings.DASHBOARD_STUCK_FAILED_RUNS = 1
    fay = make_user(username="fay")
    _finish(_run(user=fay, exercise=hand_course.e1, at=timezone.now(), passed=False, status=Run.Status.FAILED))
    assert not LearnerStanding.objects.filter(user=fay).exists()
    assert "fay" not in [row.username for row in _both(hand_course.course, DashboardFilters())[0][0]]
    Enrolment.objects.create(user=fay, course=hand_course.course)
    (listed, _), (expected, _) = _both(hand_course.course, DashboardFilters())
    assert listed == expected
    assert ("fay", 1) in [(row.username, row.failed_runs) for row in listed]


def test_a_standing_goes_with_its_enrolment(hand_course):
    Enrolment.objects.get(user=hand_course.cat, course=hand_course.course).delete()
    assert not LearnerStanding.objects.filter(user=hand_course.cat).exists()
    (listed, total), (expected, expected_total) = _both(hand_course.course, DashboardFilters())
    assert (listed, total) == (expected, expected_total) == (expected, 1)  # dan, idle

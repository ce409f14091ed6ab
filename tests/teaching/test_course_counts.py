"""The whole course's exercise counts (teaching.models.ExerciseCount and siblings): kept as runs
finish and learners enrol or leave, they hold what the learners' own summaries add up to, so the
unfiltered dashboard, read from them, shows the figures the per-learner path computes."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.models import User
from courses.models import ChapterProgress, Choice, Enrolment, Question
from courses.services.progress import exercise_record_pass
from courses.services.quizzes import quiz_answer
from runner.models import Run
from teaching.models import (
    ChapterCount,
    ChapterDayCount,
    ChoiceCount,
    ChoiceDayCount,
    Cohort,
    CohortMembership,
    ExerciseCount,
    ExerciseDayCount,
    ExerciseErrorCount,
    ExerciseErrorDayCount,
    ExercisePassCount,
    ExercisePassDayCount,
    ExerciseTimeCount,
    ExerciseTimeDayCount,
    QuestionCount,
)
from teaching.selectors.course import (
    _exercise_figures_from_counts,
    chapter_funnel,
    exercise_stats_list,
)
from teaching.selectors.filters import DashboardFilters
from teaching.selectors.questions import _question_figures
from teaching.services.cohorts import cohort_member_add
from teaching.services.course_counts import course_counts_rebuild
from teaching.services.course_data import course_data_generate
from tests.teaching import reference
from tests.teaching.conftest import _finish, _run

# Each model: the fields that name a row, and its counts.
COUNT_FIELDS = {
    ExerciseCount: (
        ("cohort_id", "exercise_id"),
        ("runs", "timed_out", "memory_stops", "learners_ran", "learners_passed"),
    ),
    ExercisePassCount: (("cohort_id", "exercise_id", "runs_to_pass"), ("learners",)),
    ExerciseTimeCount: (("cohort_id", "exercise_id", "mean_ms"), ("learners",)),
    ExerciseErrorCount: (("cohort_id", "exercise_id", "error_name"), ("runs",)),
    ExerciseDayCount: (
        ("cohort_id", "exercise_id", "day", "prev_day"),
        ("runs", "timed_out", "memory_stops", "learners"),
    ),
    ExercisePassDayCount: (("cohort_id", "exercise_id", "day", "prev_day", "runs_to_pass"), ("learners",)),
    ExerciseTimeDayCount: (("cohort_id", "exercise_id", "day", "mean_ms"), ("learners",)),
    ExerciseErrorDayCount: (("cohort_id", "exercise_id", "day", "error_name"), ("runs",)),
    ChapterCount: (("cohort_id", "chapter_id"), ("started", "quiz_finished", "completed")),
    ChapterDayCount: (("cohort_id", "chapter_id", "day"), ("quiz_finished", "completed", "enrolled_starters")),
    QuestionCount: (("cohort_id", "question_id"), ("learners",)),
    ChoiceCount: (("cohort_id", "choice_id", "is_correct", "question_id"), ("answers", "first_tries", "attempt_total")),
    ChoiceDayCount: (
        ("cohort_id", "choice_id", "is_correct", "question_id", "day", "prev_day"),
        ("answers", "first_tries", "attempt_total", "learners"),
    ),
}


def _counts(course) -> dict:
    """The course's counts, rows that count nothing left out (a learner who left leaves zeros)."""
    counts = {}
    for model, (names, figures) in COUNT_FIELDS.items():
        rows = model.objects.filter(course=course).values_list(*names, *figures)
        counts[model] = sorted((row for row in rows if any(row[len(names) :])), key=str)
    return counts


def _figures(figures: dict) -> dict:
    return {
        exercise: {name: _number(value) for name, value in row.items()}
        for exercise, row in figures.items()
        if row["learners_ran"]
    }


def _number(value):
    """PostgreSQL and SQLite give medians as floats or decimals: compare them as floats."""
    return float(value) if isinstance(value, int | float | Decimal) and not isinstance(value, bool) else value


def test_the_whole_course_figures_from_counts_are_the_learners_figures(hand_course):
    from_summaries = reference.exercise_figures(course=hand_course.course, filters=DashboardFilters())
    assert _figures(_exercise_figures_from_counts(course=hand_course.course, cohort=None)) == _figures(from_summaries)
    (e1, _) = exercise_stats_list(course=hand_course.course, filters=DashboardFilters())
    # By hand (conftest): ann, bob and cat ran e1; ann passed on run 2, bob on run 4; 9 runs.
    assert (e1.runs, e1.learners_ran, e1.learners_passed, e1.median_runs_to_pass) == (9, 3, 2, 3.0)
    assert (e1.timed_out, e1.memory_stops) == (1, 1)
    assert e1.error_types == [("NameError", 4), ("ValueError", 1)]


@pytest.mark.django_db
def test_counts_on_a_generated_course_are_the_learners_figures():
    made = course_data_generate(slug="counts", learners=60, chapters=3, runs=900, seed=5)
    course, cohorts = made.course, list(made.course.cohorts.all())
    assert len(cohorts) >= 2
    for cohort in (None, *cohorts):
        filters = DashboardFilters(cohort=cohort)
        counted = _figures(_exercise_figures_from_counts(course=course, cohort=cohort))
        assert counted
        assert counted == _figures(reference.exercise_figures(course=course, filters=filters))
        funnel = chapter_funnel(course=course, filters=filters, enrolled=60, whole_history=True)
        assert [(row.started, row.quiz_finished, row.completed) for row in funnel] == [
            (row.started, row.quiz_finished, row.completed)
            for row in reference.chapter_funnel(course=course, filters=filters)
        ]
        assert sum(row.completed for row in funnel) > 0
        # The day counts over every day add up to the counts.
        assert funnel == chapter_funnel(course=course, filters=filters, enrolled=60, whole_history=False)
        questions = _question_figures(course=course, filters=filters, whole_history=True)
        assert questions
        assert questions == _question_figures(course=course, filters=filters, whole_history=False)


def test_runs_told_as_they_finish_count_what_a_rebuild_counts(hand_course):
    course = hand_course.course
    rebuilt = _counts(course)
    runs = list(Run.objects.filter(exercise__chapter__course=course))
    for model, (names, _) in COUNT_FIELDS.items():
        if "exercise_id" in names:
            model.objects.all().delete()
    from teaching.models import ExerciseErrorSummary, ExerciseSummary

    ExerciseSummary.objects.all().delete()
    ExerciseErrorSummary.objects.all().delete()
    # The latest day's runs first: a run summarised on a day before others renumbers theirs.
    for run in sorted(runs, key=lambda run: (-run.created_at.date().toordinal(), run.created_at)):
        _finish(run)
    assert _counts(course) == rebuilt


def test_a_learner_counts_from_enrolling_until_leaving(hand_course, make_user):
    course, e1 = hand_course.course, hand_course.e1
    before = _counts(course)
    eve = make_user(username="eve")
    now = timezone.now()
    for minutes, passed, ms in ((20, False, 900), (19, True, 1100)):
        _finish(_run(user=eve, exercise=e1, at=now - dt.timedelta(minutes=minutes), passed=passed, ms=ms))
    assert _counts(course) == before  # not enrolled: not one of the course's learners yet

    enrolment = Enrolment.objects.create(user=eve, course=course)
    runs = ExerciseCount.objects.get(exercise=e1, cohort=None)
    assert (runs.runs, runs.learners_ran, runs.learners_passed) == (11, 4, 3)
    assert ExerciseTimeCount.objects.get(exercise=e1, cohort=None, mean_ms=1000).learners == 1
    assert _counts(course) == _rebuilt(course)

    enrolment.delete()
    assert _counts(course) == before == _rebuilt(course)

    Enrolment.objects.create(user=eve, course=course)
    eve.delete()  # the enrolment and summaries go with her
    assert _counts(course) == before == _rebuilt(course)


def test_a_deleted_learner_leaves_the_counts(hand_course):
    hand_course.bob.delete()
    counts = _counts(hand_course.course)
    assert counts == _rebuilt(hand_course.course)
    e1 = ExerciseCount.objects.filter(exercise=hand_course.e1, cohort=None)
    # ann and cat: 5 runs, cat's memory stop, ann's pass
    assert e1.values_list(*COUNT_FIELDS[ExerciseCount][1]).get() == (5, 0, 1, 2, 1)


def test_a_range_that_leaves_nothing_out_reads_the_counts_and_a_narrower_one_does_not(hand_course):
    course, today = hand_course.course, timezone.now().astimezone(dt.UTC).date()
    everything = DashboardFilters(start=today - dt.timedelta(days=400), end=today + dt.timedelta(days=1))
    (whole, _) = exercise_stats_list(course=course, filters=DashboardFilters())
    (wide, _) = exercise_stats_list(course=course, filters=everything)
    assert wide == whole
    (morning, _) = exercise_stats_list(course=course, filters=DashboardFilters(cohort=hand_course.morning))
    assert morning.runs == 6  # ann's and bob's, from the cohort's counts
    # Counts that disagree with the summaries show which path a dashboard read.
    ExerciseCount.objects.filter(exercise=hand_course.e1).update(runs=1000)
    (wide, _) = exercise_stats_list(course=course, filters=everything)
    assert wide.runs == 1000
    yesterday = today - dt.timedelta(days=1)
    (recent, _) = exercise_stats_list(course=course, filters=DashboardFilters(start=yesterday))
    assert recent.runs == 7  # bob's two runs ten days ago are out of the range
    (morning, _) = exercise_stats_list(
        course=course, filters=DashboardFilters(cohort=hand_course.morning, start=yesterday)
    )
    assert morning.runs == 4


def _rebuilt(course) -> dict:
    course_counts_rebuild(course=course)
    return _counts(course)


def test_an_instructor_trying_an_exercise_is_not_counted(hand_course):
    before = _counts(hand_course.course)
    teacher = hand_course.teacher
    assert teacher.role == User.Role.INSTRUCTOR
    _finish(_run(user=teacher, exercise=hand_course.e1, at=timezone.now(), passed=True))
    assert _counts(hand_course.course) == before


def test_a_learner_counts_in_a_cohort_while_a_member(hand_course):
    course, morning, cat = hand_course.course, hand_course.morning, hand_course.cat

    def morning_runs():
        return ExerciseCount.objects.get(exercise=hand_course.e1, cohort=morning).runs

    assert morning_runs() == 6
    cohort_member_add(cohort=morning, user=cat)
    assert morning_runs() == 9
    assert _counts(course) == _rebuilt(course)
    CohortMembership.objects.get(cohort=morning, user=cat).delete()
    assert morning_runs() == 6
    assert _counts(course) == _rebuilt(course)


def test_a_learner_counts_in_a_cohort_however_the_membership_is_written(hand_course, make_user):
    course, morning, cat = hand_course.course, hand_course.morning, hand_course.cat
    evening = Cohort.objects.create(course=course, name="Evening", invite_code="evening-code")
    outsider = make_user(username="not-enrolled")

    def runs(cohort):
        return ExerciseCount.objects.filter(exercise=hand_course.e1, cohort=cohort).values_list("runs", flat=True)

    morning.members.add(cat, outsider)  # a bulk insert: no row saved one by one
    assert list(runs(morning)) == [9]
    assert _counts(course) == _rebuilt(course)
    cat.cohorts.add(evening)  # from the other side
    morning.members.add(cat)  # already a member: nothing new
    assert (list(runs(morning)), list(runs(evening))) == ([9], [3])
    assert _counts(course) == _rebuilt(course)
    morning.members.remove(cat)
    evening.members.clear()
    assert (list(runs(morning)), list(runs(evening))) == ([6], [0])
    assert _counts(course) == _rebuilt(course)


def test_a_deleted_member_leaves_course_and_cohort_once(hand_course):
    hand_course.ann.delete()  # her enrolment and her membership of Morning go together
    assert ExerciseCount.objects.get(exercise=hand_course.e1, cohort=hand_course.morning).runs == 4
    assert _counts(hand_course.course) == _rebuilt(hand_course.course)


def test_a_deleted_cohort_takes_its_counts(hand_course):
    hand_course.morning.delete()
    assert not ExerciseCount.objects.exclude(cohort=None).exists()
    assert _counts(hand_course.course) == _rebuilt(hand_course.course)


def test_answers_and_progress_move_the_counts_as_they_are_saved(hand_course):
    course, dan, e1, e2 = hand_course.course, hand_course.dan, hand_course.e1, hand_course.e2
    question = Question.objects.get(pk=hand_course.q1.pk)
    for text in ("C", "A"):
        quiz_answer(user=dan, question=question, choice=Choice.objects.get(question=question, text=text))
    assert QuestionCount.objects.get(question=question, cohort=None).learners == 4
    wrong_c = ChoiceCount.objects.get(choice__text="C", question=question, cohort=None)
    assert (wrong_c.answers, wrong_c.first_tries) == (2, 1)  # bob's second try, dan's first
    part1 = ChapterCount.objects.get(chapter=hand_course.part1, cohort=None)
    assert (part1.started, part1.quiz_finished, part1.completed) == (4, 4, 2)
    assert _counts(course) == _rebuilt(course)

    for exercise in (e1, e2):
        exercise_record_pass(user=dan, exercise=exercise)
    assert ChapterCount.objects.get(chapter=hand_course.part1, cohort=None).completed == 3
    assert ChapterCount.objects.get(chapter=hand_course.part2, cohort=None).completed == 2
    assert _counts(course) == _rebuilt(course)

    ChapterProgress.objects.get(user=dan, chapter=hand_course.part2).delete()
    assert ChapterCount.objects.get(chapter=hand_course.part2, cohort=None).completed == 1
    assert _counts(course) == _rebuilt(course)


@pytest.mark.parametrize(
    "means, median",
    [
        ({1000: 1, 1030: 1}, 1015.0),  # the two middle values in neighbouring buckets of 1024 ms
        ({500: 1, 2100: 1, 5000: 1}, 2100.0),
        ({100: 3, 4000: 1, 9000: 2}, 2050.0),  # places 3 and 4 of 6
        ({700: 5}, 700.0),
    ],
)
def test_the_median_run_time_is_read_from_the_middle_buckets(hand_course, means, median):
    course, e1 = hand_course.course, hand_course.e1
    ExerciseTimeCount.objects.filter(exercise=e1).delete()
    for mean_ms, learners in means.items():
        ExerciseTimeCount.objects.create(exercise=e1, course=course, mean_ms=mean_ms, learners=learners)
    figures = _exercise_figures_from_counts(course=course, cohort=None)
    assert _number(figures[e1.pk]["median_duration_ms"]) == median

"""The course's and cohorts' answer counts per choice and day (teaching.models.ChoiceDayCount): the
quiz questions' figures read from them, for any date range and cohort, equal the figures counted
from the counted learners' answers themselves, and the counts kept as answers are saved equal a
rebuild's."""

import datetime as dt
from collections import Counter

import pytest

from courses.models import Choice, Enrolment, Question, QuizAnswer
from courses.signals import quiz_answered
from teaching.models import ChoiceCount, ChoiceDayCount, CohortMembership, QuestionCount
from teaching.selectors import DashboardFilters, question_stats_list
from teaching.services.course_counts import course_counts_rebuild
from teaching.services.rollups import rollups_rebuild
from tests.teaching.test_course_counts import _counts

pytestmark = pytest.mark.django_db

# Days ago of each learner's tries at question 2, the right one last: answers spread over days,
# some learners coming back to the question after a gap, two tries on one day.
TRIES = {"ann": [9, 9, 4], "bob": [12, 6, 6, 1], "cat": [6, 2], "dan": [0]}


@pytest.fixture
def spread(hand_course):
    question = Question.objects.create(chapter=hand_course.part1, position=2, prompt="And this one?")
    right = Choice.objects.create(question=question, position=1, text="Yes", is_correct=True)
    wrong = [Choice.objects.create(question=question, position=n, text=f"No {n}") for n in (2, 3, 4)]
    for name, days in TRIES.items():
        user = getattr(hand_course, name)
        for attempt, days_ago in enumerate(days, start=1):
            last = attempt == len(days)
            answer = QuizAnswer.objects.create(
                user=user,
                question=question,
                choice=right if last else wrong[attempt % len(wrong)],
                is_correct=last,
                attempt=attempt,
            )
            # Midday, so no try crosses into another day whatever the time now.
            day = hand_course.now.date() - dt.timedelta(days=days_ago)
            at = dt.datetime.combine(day, dt.time(12, attempt), tzinfo=dt.UTC)
            QuizAnswer.objects.filter(pk=answer.pk).update(answered_at=at)
    rollups_rebuild(course=hand_course.course)
    hand_course.q2 = question
    return hand_course


def _ranges(now):
    days = [None, *((now - dt.timedelta(days=n)).date() for n in (13, 12, 9, 7, 6, 4, 2, 1, 0))]
    return [(start, end) for start in days for end in days if not (start and end and start > end)]


def _from_answers(*, course, filters) -> list[tuple]:
    """Each question's figures counted from the answers in the range of the learners enrolled (in
    the cohort) now, by the figures' definitions."""
    learners = Enrolment.objects.filter(course=course).values("user_id")
    if filters.cohort is not None:
        learners = learners.filter(user_id__in=CohortMembership.objects.filter(cohort=filters.cohort).values("user_id"))
    figures = []
    for question in Question.objects.filter(chapter__course=course).order_by("chapter__number", "position"):
        answers = QuizAnswer.objects.filter(question=question, user_id__in=learners).select_related("choice")
        if filters.start:
            answers = answers.filter(answered_at__date__gte=filters.start)
        if filters.end:
            answers = answers.filter(answered_at__date__lte=filters.end)
        answers = list(answers)
        first = [answer for answer in answers if answer.attempt == 1]
        right = [answer.attempt for answer in answers if answer.is_correct]
        wrong = Counter((answer.choice.position, answer.choice.text) for answer in answers if not answer.is_correct)
        top = min(wrong, key=lambda choice: (-wrong[choice], choice[0]), default=None)
        figures.append(
            (
                len(first),
                sum(answer.is_correct for answer in first),
                round(sum(right) / len(right), 2) if right else None,
                len({answer.user_id for answer in answers}),
                len(answers),
                top[1] if top else "",
                wrong[top] if top else 0,
            )
        )
    return figures


def _figures(stats) -> list[tuple]:
    return [
        (
            q.first_tries,
            q.first_try_right,
            q.average_attempts,
            q.learners,
            q.answers,
            q.top_wrong_choice,
            q.top_wrong_count,
        )
        for q in stats
    ]


def test_question_figures_in_any_range_and_cohort_equal_those_counted_from_the_answers(spread):
    for cohort in (None, spread.morning):
        for start, end in _ranges(spread.now):
            filters = DashboardFilters(cohort=cohort, start=start, end=end)
            from_counts = _figures(question_stats_list(course=spread.course, filters=filters))
            assert from_counts == _from_answers(course=spread.course, filters=filters), (cohort, start, end)


def test_learners_who_came_back_to_a_question_count_once_in_a_range(spread):
    # Days 6 to 1 ago: bob (6, 6, 1), cat (6, 2) and ann (4): three learners, six answers.
    start, end = ((spread.now - dt.timedelta(days=n)).date() for n in (6, 1))
    _, q2 = question_stats_list(course=spread.course, filters=DashboardFilters(start=start, end=end))
    assert (q2.learners, q2.answers, q2.first_tries) == (3, 6, 1)


def test_an_answer_by_someone_not_counted_is_left_out(spread):
    # An instructor trying the quiz is not an enrolled learner.
    QuizAnswer.objects.create(
        user=spread.teacher, question=spread.q2, choice=spread.q2.choices.get(position=2), is_correct=False, attempt=1
    )
    rollups_rebuild(course=spread.course)
    assert not Enrolment.objects.filter(user=spread.teacher, course=spread.course).exists()
    today = DashboardFilters(start=spread.now.date())
    for filters in (DashboardFilters(), today):
        q2 = question_stats_list(course=spread.course, filters=filters)[1]
        assert (q2.learners, q2.answers) == ((4, 10) if filters.start is None else (1, 1))  # dan's answer today


def test_answers_told_as_they_are_saved_add_up_to_a_rebuild(spread):
    rebuilt = _counts(spread.course)
    assert ChoiceDayCount.objects.filter(course=spread.course).exclude(prev_day=dt.date(1, 1, 1)).exists()
    answers = list(QuizAnswer.objects.select_related("question__chapter").order_by("answered_at", "id"))
    QuizAnswer.objects.all().delete()
    for model in (ChoiceCount, ChoiceDayCount, QuestionCount):
        model.objects.all().delete()
    for answer in answers:  # saved again one by one, in order, each told as the quiz service tells it
        answered_at, answer.pk = answer.answered_at, None
        answer.save()  # the time is set on creation: put back the original
        QuizAnswer.objects.filter(pk=answer.pk).update(answered_at=answered_at)
        quiz_answered.send(
            sender=QuizAnswer,
            answer_id=answer.pk,
            user_id=answer.user_id,
            question_id=answer.question_id,
            chapter_id=answer.question.chapter_id,
            course_id=answer.question.chapter.course_id,
            choice_id=answer.choice_id,
            attempt=answer.attempt,
            is_correct=answer.is_correct,
            answered_at=answered_at,
        )
    assert _counts(spread.course) == rebuilt


def test_a_deleted_learners_answers_leave_the_counts(spread):
    spread.bob.delete()
    counted = _counts(spread.course)
    course_counts_rebuild(course=spread.course)
    assert counted == _counts(spread.course)
    q1, q2 = question_stats_list(
        course=spread.course, filters=DashboardFilters(start=spread.now.date() - dt.timedelta(days=30))
    )
    assert (q1.learners, q1.answers, q2.learners, q2.answers) == (2, 3, 3, 6)

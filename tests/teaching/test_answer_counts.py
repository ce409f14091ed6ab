"""The course's answer counts per choice and day (teaching.models.AnswerDaySummary): the quiz
questions' figures read from them equal the figures read from every answer, for any date range,
and the counts kept as answers are saved equal a rebuild's."""

import datetime as dt

import pytest

from courses.models import Choice, Enrolment, Question, QuizAnswer
from courses.signals import quiz_answered
from teaching.models import AnswerDaySummary, ChapterSummary
from teaching.selectors import DashboardFilters, question_stats_list
from teaching.selectors import questions as question_selectors
from teaching.services.rollups import rollups_rebuild
from tests.teaching.test_rollups import _summaries

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


def _from_answers(monkeypatch, **kwargs):
    with monkeypatch.context() as patch:
        patch.setattr(question_selectors, "_only_counted_learners_answered", lambda **_: False)
        return question_stats_list(**kwargs)


def test_question_figures_from_the_counts_equal_those_from_every_answer(spread, monkeypatch):
    for start, end in _ranges(spread.now):
        filters = DashboardFilters(start=start, end=end)
        assert question_selectors._only_counted_learners_answered(course=spread.course, filters=filters)
        from_counts = question_stats_list(course=spread.course, filters=filters)
        assert from_counts == _from_answers(monkeypatch, course=spread.course, filters=filters), (start, end)


def test_learners_who_came_back_to_a_question_count_once_in_a_range(spread):
    # Days 6 to 1 ago: bob (6, 6, 1), cat (6, 2) and ann (4): three learners, six answers.
    start, end = ((spread.now - dt.timedelta(days=n)).date() for n in (6, 1))
    _, q2 = question_stats_list(course=spread.course, filters=DashboardFilters(start=start, end=end))
    assert (q2.learners, q2.answers, q2.first_tries) == (3, 6, 1)


def test_an_answer_by_someone_not_counted_is_left_out(spread, monkeypatch):
    # An instructor trying the quiz is not an enrolled learner: the counts hold their answer, so
    # the figures are read from the counted learners' answers.
    QuizAnswer.objects.create(
        user=spread.teacher, question=spread.q2, choice=spread.q2.choices.get(position=2), is_correct=False, attempt=1
    )
    rollups_rebuild(course=spread.course)
    assert not Enrolment.objects.filter(user=spread.teacher, course=spread.course).exists()
    q2 = question_stats_list(course=spread.course, filters=DashboardFilters())[1]
    assert (q2.learners, q2.answers, q2.first_tries) == (4, 10, 4)


def test_answers_told_as_they_are_saved_add_up_to_a_rebuild(spread):
    def rows():
        return _summaries(spread.course)[2:]  # the chapter summaries and the answer counts

    rebuilt = rows()
    assert all(rebuilt)
    AnswerDaySummary.objects.all().delete()
    ChapterSummary.objects.all().delete()
    for answer in QuizAnswer.objects.select_related("question__chapter").order_by("answered_at", "id"):
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
            answered_at=answer.answered_at,
        )
    assert rows() == rebuilt


def test_a_deleted_learners_answers_leave_the_counts(spread, monkeypatch):
    spread.bob.delete()
    counted = _summaries(spread.course)[3]
    rollups_rebuild(course=spread.course)
    assert counted == _summaries(spread.course)[3]
    filters = DashboardFilters()
    assert question_selectors._only_counted_learners_answered(course=spread.course, filters=filters)
    q1, q2 = question_stats_list(course=spread.course, filters=filters)
    assert (q1.learners, q1.answers, q2.learners, q2.answers) == (2, 3, 3, 6)

"""The dashboards count a quiz answer and a change of a chapter's progress once the learner has the
verdict, from a note written with them: after the response, once, never lost, and soon
(teaching.services.outbox, teaching.later)."""

import contextlib
import time

import pytest
import requests
from django.utils import timezone
from rest_framework.authtoken.models import Token

from courses.models import ChapterProgress, Choice, Enrolment, QuizAnswer
from courses.services.quizzes import quiz_answer
from teaching import later
from teaching.models import AnswerToCount, ChapterCount, ChoiceCount, CohortMembership, ProgressToCount
from teaching.services import outbox
from teaching.services.cohorts import cohort_member_add
from tests.teaching.dashboard_api import dashboard_read, wait_until
from tests.teaching.test_course_counts import _counts, _rebuilt

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def _request():
    """What a web request does around its view: the counts wait for its end."""
    later.begin_request()
    yield
    later.finish()


def _answer(user, question, text: str):
    return quiz_answer(user=user, question=question, choice=Choice.objects.get(question=question, text=text))


def _wrong_c(hand_course) -> tuple[int, int]:
    row = ChoiceCount.objects.get(choice__text="C", question=hand_course.q1, cohort=None)
    return row.answers, row.first_tries


def _part1() -> tuple[int, int, int]:
    row = ChapterCount.objects.get(chapter__number=1, chapter__course__slug="hand", cohort=None)
    return row.started, row.quiz_finished, row.completed


def test_an_answer_and_its_progress_are_counted_when_the_request_has_ended(hand_course):
    course, dan, q1 = hand_course.course, hand_course.dan, hand_course.q1
    before = _counts(course)

    with _request():
        wrong = _answer(dan, q1, "C")
        right = _answer(dan, q1, "A")  # finishes the part's quiz: dan's progress changes
        # The learner has both verdicts; the counts have not moved yet.
        assert (wrong.is_correct, right.is_correct, right.quiz_finished) == (False, True, True)
        assert _counts(course) == before
        assert AnswerToCount.objects.filter(answer__user=dan).count() == 2
        assert ProgressToCount.objects.filter(progress__user=dan, existed=False).count() == 1

    assert _wrong_c(hand_course) == (2, 1)  # bob's second try, dan's first
    assert _part1() == (4, 4, 2)  # dan started and finished the quiz
    assert not AnswerToCount.objects.exists() and not ProgressToCount.objects.exists()
    assert _counts(course) == _rebuilt(course)


def test_notes_left_by_a_process_that_died_are_counted_once_by_the_sweep(hand_course):
    course, dan, q1 = hand_course.course, hand_course.dan, hand_course.q1
    before = _counts(course)
    later.begin_request()
    _answer(dan, q1, "B")
    _answer(dan, q1, "A")
    later.abandon()  # the web process dies before the end of its request

    fresh = outbox.counts_left(older_than_s=60)
    assert (fresh, _counts(course)) == (0, before), "the sweep leaves notes a live process is about to count"
    swept = [outbox.counts_left(older_than_s=0), outbox.counts_left(older_than_s=0)]
    late = [
        outbox.answer_count(answer_id=pk) for pk in QuizAnswer.objects.filter(user=dan).values_list("pk", flat=True)
    ]

    assert swept == [3, 0]  # two answers and one progress row, once
    assert late == [False, False]
    assert _part1() == (4, 4, 2)
    assert _counts(course) == _rebuilt(course)


def test_a_learner_who_joins_enrols_or_leaves_with_counts_to_come_is_counted_once(hand_course, make_user):
    """Joining a cohort or enrolling adds what the counts have of the learner so far; what is still
    to count is added by its own count, to the scopes the learner is in by then."""
    course, dan, q1, morning = hand_course.course, hand_course.dan, hand_course.q1, hand_course.morning
    eve = make_user(username="eve")
    later.begin_request()
    _answer(dan, q1, "C")
    _answer(eve, q1, "A")  # not enrolled yet: counted nowhere
    later.abandon()

    cohort_member_add(cohort=morning, user=dan)
    Enrolment.objects.create(user=eve, course=course)
    assert outbox.counts_left(older_than_s=0) == 4  # two answers, two progress rows
    assert _counts(course) == _rebuilt(course)

    later.begin_request()
    _answer(dan, q1, "A")
    later.abandon()
    CohortMembership.objects.get(cohort=morning, user=dan).delete()
    Enrolment.objects.get(user=eve, course=course).delete()
    outbox.counts_left(older_than_s=0)
    assert _counts(course) == _rebuilt(course)


def test_a_progress_row_deleted_before_its_count_leaves_the_counts_as_they_were_counted(hand_course):
    course, dan, q1 = hand_course.course, hand_course.dan, hand_course.q1
    with _request():
        _answer(dan, q1, "A")
    counted = _part1()
    progress = ChapterProgress.objects.get(user=dan, chapter=q1.chapter)

    later.begin_request()
    progress.completed_at = timezone.now()
    progress.save()  # a change still to count ...
    later.abandon()
    progress.delete()  # ... and the row goes before it is counted

    assert counted == (4, 4, 2)
    assert _part1() == (3, 3, 2)  # dan's start and finished quiz leave; the completion never came
    assert outbox.counts_left(older_than_s=0) == 0
    assert _counts(course) == _rebuilt(course)


@pytest.mark.services
def test_the_dashboard_shows_an_answer_within_two_seconds_of_its_verdict(web_server, hand_course, transactional_db):
    course, dan, q1 = hand_course.course, hand_course.dan, hand_course.q1
    token, board_token = Token.objects.create(user=dan).key, Token.objects.create(user=hand_course.teacher).key

    def question_row() -> dict:
        body = dashboard_read(web_server, board_token, course)
        return next(row for row in body["questions"] if row["question"] == q1.pk)

    assert question_row()["answers"] == 6
    choice = Choice.objects.get(question=q1, text="C")
    response = requests.post(
        f"{web_server.url}/api/quiz/answers/",
        json={"question": q1.pk, "choice": choice.pk},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    answered_at = time.monotonic()
    assert response.status_code in (200, 201), response.text
    assert response.json()["is_correct"] is False

    row = wait_until("the dashboard to show the answer", lambda: (r := question_row())["answers"] == 7 and r)
    shown_after_s = time.monotonic() - answered_at

    assert row["answers"] == 7, "the dashboard never showed the answer"
    assert shown_after_s <= 2.0, f"the dashboard showed the answer {shown_after_s:.2f} s after its verdict"
    assert not AnswerToCount.objects.exists()
    assert _counts(course) == _rebuilt(course)

"""Spaced review, as the service writes it: a question joins a learner's review with their first
quiz answer to it (missed: back soon; right: later), a review answer moves it and is kept, and
none of it touches the quiz: no quiz answer, no score change, no quiz figures."""

import datetime as dt
import logging

import pytest
from fsrs import Rating, State

from courses.models import ChapterProgress, QuizAnswer, ReviewAnswer, ReviewCard
from courses.review_models import ReviewRating, ReviewState
from courses.selectors_review import review_next_for_learner, review_summary_for_learner
from courses.services import review
from courses.services.quizzes import quiz_answer
from courses.signals import quiz_answered
from teaching.selectors import DashboardFilters, question_stats_list
from tests.learning.conftest import questions_of, right, wrong

pytestmark = pytest.mark.django_db


def test_the_stored_states_and_ratings_are_the_schedulers():
    assert {(s.value, s.name) for s in State} == {(s.value, s.label) for s in ReviewState}
    assert {(r.value, r.name) for r in Rating} == {(r.value, r.label) for r in ReviewRating}


def test_it_schedules_a_question_with_the_first_quiz_answer_only(learner, course, clock):
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    card = ReviewCard.objects.get(user=learner, question=q1)
    assert card.course_id == course.pk
    assert card.due == clock.at + dt.timedelta(hours=12)
    first = ReviewCard.objects.filter(pk=card.pk).values().get()

    clock.move(hours=1)
    quiz_answer(user=learner, question=q1, choice=wrong(q1, 2))
    quiz_answer(user=learner, question=q1, choice=right(q1))
    assert ReviewCard.objects.filter(pk=card.pk).values().get() == first
    assert ReviewCard.objects.count() == 1


def test_a_missed_question_comes_back_sooner_than_one_answered_right(learner, course, clock):
    q1, q2, *_ = questions_of(course, 2)
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    quiz_answer(user=learner, question=q1, choice=right(q1))
    quiz_answer(user=learner, question=q2, choice=right(q2))
    missed, known = (ReviewCard.objects.get(user=learner, question=q) for q in (q1, q2))
    assert clock.at < missed.due < known.due
    assert known.due - clock.at >= dt.timedelta(days=1)

    # Nothing is due yet; half a day later the missed one is, and only it.
    assert review_next_for_learner(user=learner, course=course, at=clock.at) is None
    clock.move(hours=12)
    assert review_next_for_learner(user=learner, course=course, at=clock.at).question == q1
    assert review_summary_for_learner(user=learner, course=course, at=clock.at).due == 1


def test_a_review_answer_moves_the_card_and_is_kept(learner, course, clock):
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    clock.move(hours=13)

    missed = review.review_answer(user=learner, question=q1, choice=wrong(q1))
    assert (missed.is_correct, missed.recorded, missed.explanation) == (False, True, wrong(q1).explanation)
    assert missed.right_choice == right(q1) and missed.due == 0
    assert missed.next_due_at == clock.at + dt.timedelta(hours=12)

    clock.move(hours=12)
    knew = review.review_answer(user=learner, question=q1, choice=right(q1))
    assert knew.is_correct and knew.next_due_at - clock.at >= dt.timedelta(days=1)
    card = ReviewCard.objects.get(user=learner, question=q1)
    assert (card.due, card.last_review, card.state) == (knew.next_due_at, clock.at, ReviewState.REVIEW)
    answers = list(ReviewAnswer.objects.filter(user=learner).order_by("answered_at"))
    assert [(a.is_correct, a.rating, a.choice_id) for a in answers] == [
        (False, Rating.Again, wrong(q1).pk),
        (True, Rating.Good, right(q1).pk),
    ]
    assert answers[1].answered_at == clock.at and answers[1].chapter_id == q1.chapter_id


def test_review_answers_leave_the_quiz_its_score_and_its_figures_alone(learner, course, part_2, clock):
    questions = questions_of(course, 2)
    for question in questions:
        quiz_answer(user=learner, question=question, choice=wrong(question))
        quiz_answer(user=learner, question=question, choice=right(question))
    progress = ChapterProgress.objects.get(user=learner, chapter=part_2)
    quiz_rows = list(QuizAnswer.objects.values_list("pk", "is_correct", "attempt"))
    figures = question_stats_list(course=course, filters=DashboardFilters())
    sent = []
    quiz_answered.connect(sent.append, dispatch_uid="review-test")
    try:
        clock.move(days=1)
        for question in questions:
            review.review_answer(user=learner, question=question, choice=right(question))
    finally:
        quiz_answered.disconnect(dispatch_uid="review-test")
    assert sent == []
    assert ReviewAnswer.objects.count() == 5
    assert list(QuizAnswer.objects.values_list("pk", "is_correct", "attempt")) == quiz_rows
    after = ChapterProgress.objects.get(user=learner, chapter=part_2)
    assert progress.quiz_score == 0  # every first try was wrong
    assert (after.quiz_score, after.quiz_finished_at) == (progress.quiz_score, progress.quiz_finished_at)
    assert question_stats_list(course=course, filters=DashboardFilters()) == figures


def test_it_refuses_an_answer_out_of_turn_or_to_another_question(learner, course, clock):
    q1, q2, *_ = questions_of(course, 2)
    with pytest.raises(review.ReviewNotDueError, match="not in your review"):
        review.review_answer(user=learner, question=q1, choice=right(q1))
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    with pytest.raises(review.ReviewNotDueError, match="not due for review until") as early:
        review.review_answer(user=learner, question=q1, choice=right(q1))
    assert early.value.due_at == clock.at + dt.timedelta(hours=12)
    clock.move(hours=12)
    with pytest.raises(review.ReviewAnswerInvalidError, match="another question"):
        review.review_answer(user=learner, question=q1, choice=right(q2))
    assert not ReviewAnswer.objects.exists()


def test_the_same_answer_sent_twice_is_kept_once(learner, course, clock):
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    clock.move(hours=12)
    first = review.review_answer(user=learner, question=q1, choice=right(q1))
    again = review.review_answer(user=learner, question=q1, choice=right(q1))
    assert (first.recorded, again.recorded) == (True, False)
    assert again.answer_id == first.answer_id and again.next_due_at == first.next_due_at
    with pytest.raises(review.ReviewNotDueError):
        review.review_answer(user=learner, question=q1, choice=wrong(q1))
    assert ReviewAnswer.objects.count() == 1


def _due_card(learner, question, at, **fields):
    return ReviewCard.objects.create(
        user=learner, question=question, course=question.chapter.course, due=at - dt.timedelta(hours=1), **fields
    )


def test_a_card_the_scheduler_cannot_read_is_skipped_with_a_log_line(learner, course, clock, caplog):
    q1, q2, *_ = questions_of(course, 2)
    # Written directly, as a bad import or a hand edit would: the Review state needs a stability.
    broken = _due_card(learner, q1, clock.at, state=ReviewState.REVIEW, difficulty=5.0)
    relearning = _due_card(learner, q2, clock.at, state=ReviewState.RELEARNING, stability=2.0, difficulty=5.0)
    relearning.due = broken.due + dt.timedelta(seconds=1)
    relearning.save()
    q3 = questions_of(course, 2)[2]
    review.review_schedule_first_answer(user=learner, question=q3, is_correct=False)
    clock.move(hours=12)

    with caplog.at_level(logging.WARNING):
        card = review_next_for_learner(user=learner, course=course, at=clock.at)
    assert card.question == q3
    skipped = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"review card {broken.pk}" in line and "stability" in line for line in skipped), skipped
    assert any(f"review card {relearning.pk}" in line and "step" in line for line in skipped), skipped

    caplog.clear()
    with caplog.at_level(logging.WARNING), pytest.raises(review.ReviewNotDueError, match="cannot be read"):
        review.review_answer(user=learner, question=q1, choice=right(q1))
    assert any(f"review card {broken.pk}" in r.getMessage() for r in caplog.records)
    assert ReviewCard.objects.filter(pk=broken.pk).values_list("stability", flat=True).get() is None
    assert not ReviewAnswer.objects.exists()


def test_a_question_of_a_part_unpublished_since_is_skipped_with_a_log_line(learner, course, clock, caplog):
    q1 = questions_of(course, 2)[0]
    q4 = questions_of(course, 4)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    clock.move(minutes=1)
    quiz_answer(user=learner, question=q4, choice=wrong(q4))
    clock.move(hours=12)
    part_2 = q1.chapter
    part_2.published = False
    part_2.save()

    with caplog.at_level(logging.WARNING):
        card = review_next_for_learner(user=learner, course=course, at=clock.at)
    assert card.question == q4
    assert any("no longer in a published chapter" in r.getMessage() for r in caplog.records)
    assert review_summary_for_learner(user=learner, course=course, at=clock.at).due == 1

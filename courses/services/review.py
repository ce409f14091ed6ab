"""Spaced review of quiz questions: when a learner is asked a question again, and what an answer on
the Review page does to its schedule.

- A learner's first answer to a question in its quiz schedules it (review_schedule_first_answer,
  called by courses.services.quizzes.quiz_answer in the answer's transaction): a wrong answer is
  rated Again and comes back after the first learning step, a right one is rated Good and comes
  back after days. Later tries at the quiz leave the schedule alone.
- An answer on the Review page (review_answer) rates the card (right: Good, wrong: Again), moves
  it and is kept as a ReviewAnswer. It writes no QuizAnswer, changes no quiz score and sends no
  `quiz_answered`: the quiz dashboards' first-try figures stay the learners' first tries.

The scheduler is the maintained `fsrs` package (FSRS 6): nothing here computes an interval.
"""

import datetime as dt
import logging
from dataclasses import dataclass

from django.db import transaction
from django.http import Http404
from django.utils import timezone
from fsrs import Card, Rating, Scheduler

from courses.models import Choice, Question, ReviewAnswer, ReviewCard
from courses.review_models import ReviewState
from courses.selectors import chapter_is_open_for_user, course_check_admitted, course_list_for_user
from courses.selectors_review import review_card_as_fsrs, review_summary_for_learner

logger = logging.getLogger(__name__)

# The scheduler's parameters, in one place:
# - FSRS's default model weights and 90 % desired retention: a question comes back when the
#   learner is predicted to have a nine-in-ten chance of still answering it right.
# - One learning step of 12 hours (FSRS's defaults are 1 and 10 minutes, made for a deck drilled
#   in one sitting): a learner who missed a question has just read its explanation in the quiz,
#   so asking it again minutes later tests their short-term memory only. Twelve hours brings it
#   back on a later visit, the same evening or the next morning. A right first answer is rated
#   Good, which leaves the single step at once for an interval of days (about two). A question
#   missed on the Review page comes back after the same 12 hours (the relearning step).
# - At most a year between two reviews: a course is taken over weeks or months; past a year the
#   question is still asked once a year rather than never again.
# - No fuzz: fuzz spreads the reviews of a large deck learned on one day over neighbouring days so
#   they do not all fall due together. A quiz has a handful of questions, and a learner reviewing
#   a part's questions together is no burden; without it the schedule is the same for every
#   learner with the same answers, which is what an instructor or a test expects to see.
SCHEDULER = Scheduler(
    learning_steps=(dt.timedelta(hours=12),),
    relearning_steps=(dt.timedelta(hours=12),),
    maximum_interval=365,
    enable_fuzzing=False,
)

NOT_SCHEDULED = "This question is not in your review: a question joins it when you first answer it in its quiz."
NOT_PUBLISHED = "This question's part is not published, so the question is not in the review."
UNREADABLE = "This question's review schedule cannot be read, so it is left out of the review."


def now() -> dt.datetime:
    """The review's clock: every schedule is written from it and the pages count from it. Tests
    move it (patch courses.services.review.now) instead of waiting hours."""
    return timezone.now()


def _utc(moment: dt.datetime) -> dt.datetime:
    # fsrs accepts datetime.timezone.utc only.
    return moment.astimezone(dt.UTC)


class ReviewAnswerInvalidError(ValueError):
    """The answer does not fit the question: a choice of another question."""


class ReviewNotDueError(ValueError):
    """The question cannot be answered in the review now: it is not scheduled, not due yet, in an
    unpublished part, or its schedule cannot be read. `due_at` says when it is due, where known."""

    def __init__(self, message: str, *, due_at: dt.datetime | None = None):
        super().__init__(message)
        self.due_at = due_at


@dataclass(frozen=True)
class ReviewResult:
    answer_id: int
    question: Question
    choice: Choice
    is_correct: bool
    right_choice: Choice | None
    # False when the submission repeated the answer that scheduled the card (a double click, a
    # replayed request): nothing was written.
    recorded: bool
    next_due_at: dt.datetime
    due: int  # questions of the course still due for the learner

    @property
    def explanation(self) -> str:
        return self.choice.explanation


def _rating(is_correct: bool) -> Rating:
    return Rating.Good if is_correct else Rating.Again


def _card_fields(card: Card) -> dict:
    return {
        "state": ReviewState(card.state.value),
        "step": card.step,
        "stability": card.stability,
        "difficulty": card.difficulty,
        "due": card.due,
        "last_review": card.last_review,
    }


def review_schedule_first_answer(*, user, question: Question, is_correct: bool) -> ReviewCard:
    """Put `question` in `user`'s review after their first answer to it in the quiz: wrong comes
    back soon, right later. A question already scheduled keeps its schedule."""
    at = _utc(now())
    scheduled, _ = SCHEDULER.review_card(Card(card_id=0, due=at), _rating(is_correct), at)
    card, _ = ReviewCard.objects.get_or_create(
        user=user, question=question, defaults={"course_id": question.chapter.course_id, **_card_fields(scheduled)}
    )
    return card


def _when(moment: dt.datetime) -> str:
    moment = _utc(moment)
    return f"{moment.day} {moment:%b %Y, %H:%M} UTC"


def review_answer(*, user, question: Question, choice: Choice) -> ReviewResult:
    """Record `user`'s review answer `choice` to `question` and move its schedule.

    - The question must be in a chapter the user may open (else Http404; InviteRequired for a
      course by invitation that does not admit them) and the choice one of its own (else
      ReviewAnswerInvalidError).
    - The question must be due in the user's review (else ReviewNotDueError, with when it is due).
      Sending again the answer that last moved the card, while it is not due, records nothing and
      returns that stored answer: a double click or a replayed request is not refused.
    - A card the scheduler cannot read is left alone and refused (ReviewNotDueError), with a log
      line; nothing is written.
    """
    if not (user and user.is_authenticated):
        raise Http404("No such question.")
    chapter = question.chapter
    if not (
        course_list_for_user(user=user).filter(pk=chapter.course_id).exists()
        and chapter_is_open_for_user(chapter=chapter, user=user)
    ):
        raise Http404("No such question.")
    course_check_admitted(course=chapter.course, user=user)
    if choice.question_id != question.pk:
        raise ReviewAnswerInvalidError("That choice belongs to another question.")
    if not chapter.published:
        raise ReviewNotDueError(NOT_PUBLISHED)

    with transaction.atomic():
        # Two tabs answering the same card wait here for each other; the second then finds it
        # no longer due.
        card = ReviewCard.objects.select_for_update().filter(user=user, question=question).first()
        if card is None:
            raise ReviewNotDueError(NOT_SCHEDULED)
        at = _utc(now())
        if card.due > at:
            latest = ReviewAnswer.objects.filter(user=user, question=question).order_by("-answered_at", "-pk").first()
            if latest is not None and latest.choice_id == choice.pk and latest.answered_at == card.last_review:
                return _result(user=user, question=question, answer=latest, card=card, recorded=False, at=at)
            raise ReviewNotDueError(f"This question is not due for review until {_when(card.due)}.", due_at=card.due)
        scheduled = review_card_as_fsrs(card)
        if scheduled is None:
            raise ReviewNotDueError(UNREADABLE)
        is_correct = question.question_type.is_right(choice)
        try:
            scheduled, _ = SCHEDULER.review_card(scheduled, _rating(is_correct), at)
        except (ValueError, ArithmeticError, AssertionError) as problem:
            # Fields fsrs took but cannot compute with (review_card_as_fsrs checks what it can).
            logger.warning(
                "review card %s (learner %s) skipped: the scheduler failed on it: %r", card.pk, user.pk, problem
            )
            raise ReviewNotDueError(UNREADABLE) from problem
        fields = _card_fields(scheduled)
        for name, value in fields.items():
            setattr(card, name, value)
        card.save(update_fields=list(fields))
        answer = ReviewAnswer.objects.create(
            user=user,
            question=question,
            choice=choice,
            chapter=chapter,
            course_id=chapter.course_id,
            is_correct=is_correct,
            rating=_rating(is_correct).value,
            answered_at=at,
        )
    return _result(user=user, question=question, answer=answer, card=card, recorded=True, at=at)


def _result(*, user, question: Question, answer: ReviewAnswer, card: ReviewCard, recorded: bool, at) -> ReviewResult:
    choices = list(question.choices.all())
    summary = review_summary_for_learner(user=user, course=question.chapter.course, at=at)
    return ReviewResult(
        answer_id=answer.pk,
        question=question,
        choice=next((c for c in choices if c.pk == answer.choice_id), answer.choice),
        is_correct=answer.is_correct,
        right_choice=question.question_type.right_choice(choices),
        recorded=recorded,
        next_due_at=card.due,
        due=summary.due if summary is not None else 0,
    )

"""Reads for spaced review: how many questions are due, the next one to ask, what an answer said.

Every read takes the moment it counts from (`at`): callers pass courses.services.review.now(), the
one clock of the review, so a test that moves it moves the pages and the API together.

Only questions of published chapters are asked and counted: a chapter unpublished since its
questions were scheduled takes them out of the review until it is published again. A card the
scheduler cannot read, or one whose question is no longer in a published chapter, is skipped with
a log line where the next question is chosen (review_next_for_learner); the learner is never
shown an error for it.
"""

import datetime as dt
import logging
import math
from dataclasses import dataclass

from django.db.models import Count, Min, Q, prefetch_related_objects
from django.http import Http404
from fsrs import Card, State

from courses.models import Choice, Course, Question, ReviewAnswer, ReviewCard
from courses.selectors import choices_for_learner, course_check_admitted, course_list_for_user

logger = logging.getLogger(__name__)

# Due cards read at a time while the next question is chosen: the first readable one ends the read,
# so only cards skipped ahead of it (rare) make a second batch.
QUEUE_BATCH = 20


def _utc(moment: dt.datetime | None) -> dt.datetime | None:
    # fsrs wants datetime.timezone.utc itself; a database may hand back another UTC tzinfo.
    return None if moment is None else moment.astimezone(dt.UTC)


def review_card_as_fsrs(card: ReviewCard) -> Card | None:
    """The row as the scheduler's card, or None (with a log line) when the scheduler could not
    take it: a state it does not know, or fields its state needs missing or out of range."""
    try:
        state = State(card.state)
        for name in ("stability", "difficulty"):
            value = getattr(card, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} {value} is not a positive number")
        needs = {
            State.Learning: (),
            State.Review: ("stability", "difficulty"),
            State.Relearning: ("step", "stability", "difficulty"),
        }
        missing = [name for name in needs[state] if getattr(card, name) is None]
        if missing:
            raise ValueError(f"the {state.name} state needs {' and '.join(missing)}")
        if state == State.Review and card.step is not None:
            raise ValueError("the Review state has no learning step")
        if (card.stability is None) != (card.difficulty is None):
            raise ValueError("stability and difficulty come together")
        return Card(
            card_id=card.pk or 0,  # given, so fsrs does not wait a millisecond to make one up
            state=state,
            step=card.step,
            stability=card.stability,
            difficulty=card.difficulty,
            due=_utc(card.due),
            last_review=_utc(card.last_review),
        )
    except (ValueError, TypeError) as problem:
        logger.warning(
            "review card %s (learner %s, question %s) skipped: the scheduler cannot read it: %s",
            card.pk,
            card.user_id,
            card.question_id,
            problem,
        )
        return None


def course_get_by_id_for_review(*, user, course_id: int) -> Course:
    """A course the user sees (404 otherwise) and may learn in (InviteRequired otherwise)."""
    course = course_list_for_user(user=user).filter(pk=course_id).distinct().first()
    if course is None:
        raise Http404("No such course.")
    course_check_admitted(course=course, user=user)
    return course


def _reviewable(*, user) -> Q:
    return Q(user=user, question__chapter__published=True)


def review_due_counts(*, user, course_ids: list[int], at: dt.datetime) -> dict[int, int]:
    """{course id: questions due} for the catalog, in one query whatever the number of courses;
    courses with nothing due have no entry. Empty for visitors, without a query."""
    if not (user and user.is_authenticated) or not course_ids:
        return {}
    due = (
        ReviewCard.objects.filter(_reviewable(user=user), course_id__in=course_ids, due__lte=at)
        .values("course_id")
        .annotate(n=Count("id"))
        .values_list("course_id", "n")
    )
    return dict(due)


@dataclass(frozen=True)
class ReviewSummary:
    """A learner's review in one course: questions due now, questions scheduled, the earliest due."""

    due: int
    scheduled: int
    next_due_at: dt.datetime | None


def review_summary_for_learner(*, user, course: Course, at: dt.datetime) -> ReviewSummary | None:
    """One query; None for visitors."""
    if not (user and user.is_authenticated):
        return None
    figures = ReviewCard.objects.filter(_reviewable(user=user), course=course).aggregate(
        due_now=Count("id", filter=Q(due__lte=at)), scheduled=Count("id"), earliest=Min("due")
    )
    return ReviewSummary(due=figures["due_now"], scheduled=figures["scheduled"], next_due_at=figures["earliest"])


def review_next_for_learner(*, user, course: Course, at: dt.datetime) -> ReviewCard | None:
    """The learner's question due longest ago in the course that can be asked, with its question,
    chapter and choices (`question.choices.all()`, in order); None when nothing is due. Cards
    skipped on the way are logged (review_card_as_fsrs; a question out of a published chapter)."""
    if not (user and user.is_authenticated):
        return None
    due = (
        ReviewCard.objects.filter(user=user, course=course, due__lte=at)
        .select_related("question__chapter")
        .order_by("due", "pk")
    )
    after: Q = Q()
    while True:
        batch = list(due.filter(after)[:QUEUE_BATCH])
        for card in batch:
            if not card.question.chapter.published:
                logger.warning(
                    "review card %s (learner %s) skipped: question %s is no longer in a published chapter",
                    card.pk,
                    card.user_id,
                    card.question_id,
                )
            elif review_card_as_fsrs(card) is not None:
                card.question.chapter.course = course
                prefetch_related_objects([card.question], "choices")
                return card
        if len(batch) < QUEUE_BATCH:
            return None
        last = batch[-1]
        after = Q(due__gt=last.due) | Q(due=last.due, pk__gt=last.pk)


def review_choices_for_learner(*, question: Question, user) -> list[Choice]:
    """The question's choices in the order the learner is shown them on the Review page and in the
    API: the learner's own order, as in the quiz (prefetched: no query)."""
    return choices_for_learner(question=question, user=user)


@dataclass(frozen=True)
class ReviewFeedback:
    """What a learner is shown after a review answer: right or wrong, the explanation of the choice
    they picked (as the quiz shows it), the right answer, and when the question comes back."""

    answer: ReviewAnswer
    question: Question
    choice: Choice
    right_choice: Choice | None
    next_due_at: dt.datetime | None

    @property
    def is_correct(self) -> bool:
        return self.answer.is_correct

    @property
    def explanation(self) -> str:
        return self.choice.explanation


def review_feedback_for_learner(*, user, course: Course, answer_id) -> ReviewFeedback | None:
    """The feedback of one of the learner's own review answers in the course (None for anything else:
    another learner's answer, another course's, a malformed id)."""
    if not (user and user.is_authenticated):
        return None
    try:
        answer_id = int(answer_id)
    except (TypeError, ValueError):
        return None
    answer = (
        ReviewAnswer.objects.filter(pk=answer_id, user=user, course=course)
        .select_related("question", "choice", "chapter")
        .first()
    )
    if answer is None:
        return None
    question = answer.question
    choices = list(question.choices.order_by("position"))
    card = ReviewCard.objects.filter(user=user, question=question).only("due").first()
    return ReviewFeedback(
        answer=answer,
        question=question,
        choice=answer.choice,
        right_choice=question.question_type.right_choice(choices),
        next_due_at=card.due if card is not None else None,
    )

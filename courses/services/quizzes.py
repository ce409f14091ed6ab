"""Writes for quizzes: a learner's answer to one question.

A quiz is asked one question at a time, in order. Every answer is kept (QuizAnswer, attempt 1 is
the first try), so the score, "right at the first try", can never change once given, and a learner
who leaves mid-quiz comes back to the same question.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.http import Http404

from courses import selectors, signals
from courses.models import ChapterProgress, Choice, Question, QuizAnswer
from courses.services.progress import chapter_progress_refresh
from courses.services.review import review_schedule_first_answer


class QuizAnswerInvalidError(ValueError):
    """The answer does not fit the quiz: a choice of another question, or a question out of turn."""


@dataclass(frozen=True)
class AnswerResult:
    question: Question
    choice: Choice
    is_correct: bool
    attempt: int
    # False when the submission repeated one already stored (a double click, a replayed request,
    # an answer to a question already answered right): nothing was written.
    recorded: bool
    quiz_finished: bool
    score: int | None

    @property
    def explanation(self) -> str:
        return self.choice.explanation


def quiz_answer(*, user, question: Question, choice: Choice) -> AnswerResult:
    """Record `user`'s answer `choice` to `question`.

    - The question must be in a chapter the user may open (else Http404), the choice one of its
      own (else QuizAnswerInvalidError), and the question the learner's current one: the first,
      in order, not yet answered right (a later one raises QuizAnswerInvalidError).
    - Answering a question already answered right, or sending the same choice as the latest
      answer again, records nothing and returns that stored answer: double clicks and replayed
      requests never add attempts or change the score.
    """
    if not (user and user.is_authenticated):
        raise Http404("No such question.")
    chapter = question.chapter
    if not (
        selectors.course_list_for_user(user=user).filter(pk=chapter.course_id).exists()
        and selectors.chapter_is_open_for_user(chapter=chapter, user=user)
    ):
        raise Http404("No such question.")
    if choice.question_id != question.pk:
        raise QuizAnswerInvalidError("That choice belongs to another question.")

    with transaction.atomic():
        # One learner's answers in one chapter are taken one at a time: two tabs or a double
        # click wait here for each other, then see each other's answers.
        progress, _ = ChapterProgress.objects.get_or_create(user=user, chapter=chapter)
        ChapterProgress.objects.select_for_update().filter(pk=progress.pk).first()

        answers = list(QuizAnswer.objects.filter(user=user, question__chapter=chapter).order_by("attempt"))
        right = {a.question_id for a in answers if a.is_correct}
        mine = [a for a in answers if a.question_id == question.pk]
        if question.pk in right:
            stored = next(a for a in mine if a.is_correct)
            return _result(user=user, question=question, answer=stored, recorded=False)
        if mine and mine[-1].choice_id == choice.pk:
            return _result(user=user, question=question, answer=mine[-1], recorded=False)
        current = question.chapter.questions.exclude(pk__in=right).order_by("position").first()
        if current is None or current.pk != question.pk:
            raise QuizAnswerInvalidError("Answer the questions in order: this is not the current question.")

        try:
            # The unique (user, question, attempt) constraint is the last guard against a
            # duplicate; the savepoint keeps the outer transaction usable if it fires.
            with transaction.atomic():
                answer = QuizAnswer.objects.create(
                    user=user,
                    question=question,
                    choice=choice,
                    # The question's type says what counts as right (courses/rules.py).
                    is_correct=question.question_type.is_right(choice),
                    attempt=len(mine) + 1,
                )
        except IntegrityError:
            answer = QuizAnswer.objects.get(user=user, question=question, attempt=len(mine) + 1)
            return _result(user=user, question=question, answer=answer, recorded=False)
        if answer.attempt == 1:
            # The first answer, and only the first, puts the question in the learner's review
            # (courses/services/review.py): missed, it comes back soon; right, later.
            review_schedule_first_answer(user=user, question=question, is_correct=answer.is_correct)
        # In the same transaction: a summary kept from this signal commits with the answer.
        signals.quiz_answered.send(
            sender=QuizAnswer,
            answer_id=answer.pk,
            user_id=user.pk,
            question_id=question.pk,
            chapter_id=chapter.pk,
            course_id=chapter.course_id,
            choice_id=choice.pk,
            attempt=answer.attempt,
            is_correct=answer.is_correct,
            answered_at=answer.answered_at,
        )
        return _result(user=user, question=question, answer=answer, recorded=True)


def _result(*, user, question: Question, answer: QuizAnswer, recorded: bool) -> AnswerResult:
    progress = chapter_progress_refresh(user=user, chapter=question.chapter)
    finished = progress.quiz_finished_at is not None
    return AnswerResult(
        question=question,
        choice=answer.choice,
        is_correct=answer.is_correct,
        attempt=answer.attempt,
        recorded=recorded,
        quiz_finished=finished,
        score=progress.quiz_score if finished else None,
    )

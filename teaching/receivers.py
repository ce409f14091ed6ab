"""Keeping the dashboards' summaries in step: connected in TeachingConfig.ready(). Both signals
are sent inside the transaction that wrote the run's end or the answer, so a summary is never
ahead of or behind what it counts, and shows on the dashboard as soon as the run or answer does."""

from courses.models import Exercise
from teaching.services import course_counts, rollups


def on_run_finished(
    sender,
    *,
    user_id,
    exercise_id,
    status,
    check_passed,
    limit,
    created_at,
    finished_at,
    duration_ms,
    error_name,
    **kwargs,
):
    course_id = Exercise.objects.values_list("chapter__course_id", flat=True).get(pk=exercise_id)
    facts = rollups.run_facts(
        user_id=user_id,
        exercise_id=exercise_id,
        finished_at=finished_at,
        status=status,
        check_passed=check_passed,
        limit=limit,
        created_at=created_at,
        duration_ms=duration_ms,
        error_name=error_name,
    )
    with course_counts.RunCounting(course_id=course_id, user_id=user_id, exercise_id=exercise_id):
        rollups.exercise_summary_add_run(course_id=course_id, run=facts)


def on_quiz_answered(
    sender,
    *,
    answer_id,
    user_id,
    question_id,
    chapter_id,
    course_id,
    choice_id,
    attempt,
    is_correct,
    answered_at,
    **kwargs,
):
    answer = rollups.AnswerFacts(
        user_id=user_id, chapter_id=chapter_id, attempt=attempt, is_correct=is_correct, answered_at=answered_at
    )
    rollups.chapter_summary_add_answer(course_id=course_id, answer=answer)
    rollups.answer_day_summary_add_answer(
        course_id=course_id, question_id=question_id, choice_id=choice_id, answer_id=answer_id, answer=answer
    )


def on_user_deleting(sender, *, instance, **kwargs):
    """The course-wide answer counts do not go with a learner's rows: take their answers out."""
    rollups.answer_day_summaries_remove_learner(user_id=instance.pk)


def on_enrolment_saved(sender, *, instance, created, raw=False, **kwargs):
    """What a learner ran before enrolling counts in the course's figures once they enrol."""
    if created and not raw:
        course_counts.course_counts_add_learner(user_id=instance.user_id, course_id=instance.course_id)


def on_enrolment_deleting(sender, *, instance, **kwargs):
    """Before the delete (and the learner's summaries, when the learner goes too) takes them."""
    course_counts.course_counts_remove_learner(user_id=instance.user_id, course_id=instance.course_id)

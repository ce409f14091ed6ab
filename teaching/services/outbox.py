"""Counting in the dashboards, off the learner's path, each exactly once: a finished run, a quiz
answer, a change of a chapter's progress.

What the learner waits for (a run's result, an answer's verdict, the next question) is written and
sent first. What the dashboards read of it (the learner's summaries, the course's and cohorts'
counts, the learner's standing) is written after, from an outbox (teaching.outbox_models):

1. A note, in the transaction of the write it tells of: `run_count_note`, `answer_count_note`,
   `progress_count_note`. It commits with the write or not at all, so nothing is forgotten.
2. The count, once the learner has the result: a run's by its worker after publishing it
   (runner.signals.run_ended); an answer's or progress's after the response or the task that
   wrote it (teaching.later). It deletes the note and counts, in one transaction. Deleting first
   makes it once only: a second counter (the sweep, a retry) waits for the first's commit, then
   finds no note and counts nothing; a counter that fails rolls back and leaves the note.
3. `counts_left`, from the periodic sweep: counts the notes left by a process that died between
   its write and its count.

What the dashboards have counted of a learner is their summaries (runs), their answers without a
note, and their progress rows as the notes say they stood (teaching.services.course_counts reads
it so when a learner enrols or joins a cohort). A learner's counts in a course are taken one at a
time (their enrolment row is locked first): their share is read before and after it moves, and
two counts of the same learner at once would read the same "before" and add one change twice.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from courses.models import ChapterProgress, Enrolment, Exercise, QuizAnswer
from runner.models import Run
from teaching.models import AnswerToCount, ProgressToCount, RunToCount
from teaching.services import course_counts, rollups, standings

log = logging.getLogger(__name__)


def _learner_lock(*, user_id: int, course_id: int) -> None:
    """One count of this learner in this course at a time (see the module)."""
    list(Enrolment.objects.select_for_update().filter(user_id=user_id, course_id=course_id).values_list("pk"))


# --- Runs ---------------------------------------------------------------------------------------------


def run_count_note(*, run_id) -> None:
    """Note that a run is still to count. Call it in the transaction of the run's terminal write."""
    RunToCount.objects.create(run_id=run_id)


def run_count(*, run_id) -> bool:
    """Count one noted run and forget its note, in one transaction. Returns whether this call
    counted it (False: no note, as another counter took it or the run was never noted)."""
    with transaction.atomic():
        if not RunToCount.objects.filter(run_id=run_id).delete()[0]:
            return False
        row = Run.objects.filter(pk=run_id).values(*rollups.RUN_COLUMNS).first()
        if row is not None:  # a note goes with its run, so the run is there
            run_counted(row)
    return True


def run_counted(row: dict) -> None:
    """Count a finished run (rollups.RUN_COLUMNS) in its learner's summary, the course's and cohorts'
    counts and the learner's standing. Inside a transaction."""
    course_id = Exercise.objects.values_list("chapter__course_id", flat=True).get(pk=row["exercise_id"])
    user_id, exercise_id = row["user_id"], row["exercise_id"]
    _learner_lock(user_id=user_id, course_id=course_id)
    facts = rollups.run_facts(**row)
    share = course_counts.exercise_part(user_id=user_id, exercise_id=exercise_id)
    error = course_counts.run_error(exercise_id=exercise_id, error_name=row["error_name"], created_at=row["created_at"])
    with course_counts.Counting(course_id=course_id, user_id=user_id, part=share, known=error):
        rollups.exercise_summary_add_run(course_id=course_id, run=facts)
    standings.standing_run_finished(user_id=user_id, course_id=course_id)


# --- Quiz answers ---------------------------------------------------------------------------------------


def answer_count_note(*, answer_id) -> None:
    """Note that an answer is still to count. Call it in the transaction that saves the answer."""
    AnswerToCount.objects.create(answer_id=answer_id)


def answer_count(*, answer_id) -> bool:
    """Count one noted answer and forget its note, in one transaction. Returns whether this call
    counted it."""
    with transaction.atomic():
        if not AnswerToCount.objects.filter(answer_id=answer_id).delete()[0]:
            return False
        row = (
            QuizAnswer.objects.filter(pk=answer_id)
            .values(
                "user_id",
                "question_id",
                "attempt",
                "is_correct",
                "answered_at",
                chapter_id=F("question__chapter_id"),
                course_id=F("question__chapter__course_id"),
            )
            .first()
        )
        if row is not None:
            _answer_counted(answer_id=answer_id, **row)
    return True


def _answer_counted(*, answer_id, user_id, question_id, chapter_id, course_id, attempt, is_correct, answered_at):
    _learner_lock(user_id=user_id, course_id=course_id)
    answer = rollups.AnswerFacts(
        user_id=user_id, chapter_id=chapter_id, attempt=attempt, is_correct=is_correct, answered_at=answered_at
    )
    rollups.chapter_summary_add_answer(course_id=course_id, answer=answer)
    course_counts.course_counts_answered(
        user_id=user_id, course_id=course_id, question_id=question_id, answer_id=answer_id
    )
    if is_correct:
        standings.standing_progressed(user_id=user_id, course_id=course_id, at=answered_at)


# --- Chapter progress -------------------------------------------------------------------------------------


def progress_as_counted(*, progress_id) -> ProgressToCount:
    """How a progress row stands now, as a note would keep it: call it before the row changes."""
    row = ChapterProgress.objects.filter(pk=progress_id).values("quiz_finished_at", "completed_at").first()
    return ProgressToCount(existed=row is not None, **(row or {}))


def progress_count_note(*, progress_id, before: ProgressToCount) -> None:
    """Note that a progress row changed from `before` (progress_as_counted, read before the change;
    ProgressToCount(existed=False) for a new row). Call it in the transaction of the change. A
    note already there keeps its older "before": the counts have not seen the changes since."""
    before.progress_id = progress_id
    ProgressToCount.objects.bulk_create([before], ignore_conflicts=True)


def progress_count(*, progress_id) -> bool:
    """Count the change of one noted progress row and forget its note, in one transaction. Returns
    whether this call counted it."""
    with transaction.atomic():
        note = ProgressToCount.objects.select_for_update().filter(progress_id=progress_id).first()
        if note is None:
            return False
        note.delete()
        row = (
            ChapterProgress.objects.filter(pk=progress_id).values("user_id", course_id=F("chapter__course_id")).first()
        )
        if row is not None:
            _learner_lock(**row)
            course_counts.course_counts_progressed(**row, progress_id=progress_id, before=note)
    return True


# --- The sweep ---------------------------------------------------------------------------------------------

# Each kind of note: its model, the field naming what it tells of, and its count.
_NOTES = (
    (RunToCount, "run_id", lambda pk: run_count(run_id=pk)),
    (AnswerToCount, "answer_id", lambda pk: answer_count(answer_id=pk)),
    (ProgressToCount, "progress_id", lambda pk: progress_count(progress_id=pk)),
)


def counts_left(*, older_than_s: float, limit: int = 1000) -> int:
    """Count the notes older than `older_than_s` (a live process counts its own within
    milliseconds; older ones were left by one that died), oldest first, up to `limit` of each
    kind. Returns how many it counted. One whose count fails keeps its note for the next sweep,
    and the others go on."""
    before = timezone.now() - timedelta(seconds=older_than_s)
    counted = 0
    for model, field, count in _NOTES:
        left = model.objects.filter(noted_at__lt=before).order_by("noted_at").values_list(field, flat=True)
        for pk in list(left[:limit]):
            try:
                counted += count(pk)
            except Exception:
                log.exception("could not count %s %s; the next sweep tries again", model.__name__, pk)
    if counted:
        log.warning("counted %d notes their writer did not", counted)
    return counted

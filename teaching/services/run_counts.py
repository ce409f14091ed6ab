"""Counting finished runs in the dashboards, off the learner's path, each exactly once.

A run's end is the learner's result: its terminal write stays small and is published at once. What
the dashboards read of it (the learner's summary of the exercise, the course's and cohorts' counts,
the learner's standing) is written after, from an outbox:

1. `run_count_note`, in the transaction of the run's terminal write: one row (RunToCount) saying
   the run is still to count. It commits with the end or not at all, so no end is forgotten.
2. `run_count`, by the same worker once the learner has the result (runner.signals.run_ended):
   deletes the note and counts the run, in one transaction. Deleting first makes it once only: a
   second counter of the same run (the sweeper, a retry) waits for the first's commit, then finds
   no note and counts nothing; a counter that fails rolls back and leaves the note.
3. `runs_count_left`, from the periodic sweep: counts the notes left by a worker that died between
   its terminal write and its count.

A learner's runs in a course are counted one at a time (their enrolment row is locked first):
their share of the counts is read before and after the summary moves, and two counts of the same
learner at once would read the same "before" and add one change twice.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from courses.models import Enrolment, Exercise
from runner.models import Run
from teaching.models import RunToCount
from teaching.services import course_counts, rollups, standings

log = logging.getLogger(__name__)


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
    # One count of this learner in this course at a time (see the module).
    list(Enrolment.objects.select_for_update().filter(user_id=user_id, course_id=course_id).values_list("pk"))
    facts = rollups.run_facts(**row)
    share = course_counts.exercise_part(user_id=user_id, exercise_id=exercise_id)
    error = course_counts.run_error(exercise_id=exercise_id, error_name=row["error_name"], created_at=row["created_at"])
    with course_counts.Counting(course_id=course_id, user_id=user_id, part=share, known=error):
        rollups.exercise_summary_add_run(course_id=course_id, run=facts)
    standings.standing_run_finished(user_id=user_id, course_id=course_id)


def runs_count_left(*, older_than_s: float, limit: int = 1000) -> int:
    """Count the notes older than `older_than_s` (a live worker counts its own within
    milliseconds; older ones were left by a worker that died), oldest first. Returns how many runs
    it counted. A run whose count fails keeps its note for the next sweep, and the others go on."""
    before = timezone.now() - timedelta(seconds=older_than_s)
    left = RunToCount.objects.filter(noted_at__lt=before).order_by("noted_at").values_list("run_id", flat=True)
    counted = 0
    for run_id in list(left[:limit]):
        try:
            counted += run_count(run_id=run_id)
        except Exception:
            log.exception("could not count run %s; the next sweep tries again", run_id)
    if counted:
        log.warning("counted %d runs whose worker did not", counted)
    return counted

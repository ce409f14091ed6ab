"""The dashboards count a run after its learner has the result, from a note written with the run's
end: once, never lost, and soon (teaching.services.outbox)."""

import time
import uuid

import psycopg
import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.models import User
from courses.models import Enrolment
from runner.models import Run
from runner.tasks import run_execute_task
from teaching.models import ExerciseCount, ExerciseSummary, RunToCount
from teaching.services import outbox
from teaching.services.course_counts import course_counts_rebuild
from teaching.services.rollups import rollups_rebuild
from tests.runner.test_api_events import open_stream, sse_frames, submit
from tests.runner.worker import (
    WorkerProcess,
    backend_required,
    database_url,
    process_log_dir,
    services_required,
)
from tests.teaching.dashboard_api import dashboard_read, wait_until
from tests.teaching.test_course_counts import _counts


def _enrolled(make_learner, exercise):
    learner = make_learner()
    Enrolment.objects.create(user=learner, course=exercise.chapter.course)
    return learner


def _course_runs(exercise) -> int:
    row = ExerciseCount.objects.filter(exercise=exercise, cohort__isnull=True).first()
    return row.runs if row else 0


def _backends_waiting_on_a_lock(cursor) -> int:
    cursor.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    return cursor.fetchone()[0]


@pytest.mark.services
def test_a_worker_killed_between_a_runs_end_and_its_count_leaves_a_note_the_sweeper_counts_once(
    transactional_db, make_learner, make_exercise, tmp_path_factory
):
    services_required()
    backend_required("local")
    exercise = make_exercise()
    learner = _enrolled(make_learner, exercise)
    enrolment = Enrolment.objects.get(user=learner)
    queue = f"counts-{uuid.uuid4().hex[:8]}"  # its own queue: the session's worker cannot take the run
    worker = WorkerProcess(backend="local", log_dir=process_log_dir(tmp_path_factory), queues=queue).start()
    run = Run.objects.create(user=learner, exercise=exercise, code="print('counted once')")
    # Another session holds the learner's enrolment row, which counting a run locks first: the
    # worker ends the run, publishes it, then waits to count it, and is killed there.
    with psycopg.connect(database_url()) as holder, holder.cursor() as held:
        held.execute(f"SELECT id FROM {Enrolment._meta.db_table} WHERE id = %s FOR UPDATE", [enrolment.pk])
        try:
            run_execute_task.apply_async(args=[str(run.pk)], queue=queue)
            wait_until("the run to end", lambda: Run.objects.filter(pk=run.pk, status="succeeded").exists())
            with psycopg.connect(database_url(), autocommit=True) as watcher, watcher.cursor() as watching:
                wait_until("the worker to wait to count the run", lambda: _backends_waiting_on_a_lock(watching))
            worker.kill()
        finally:
            worker.kill()
        holder.rollback()

    assert Run.objects.get(pk=run.pk).status == "succeeded", "the learner's result stands"
    assert RunToCount.objects.filter(run=run).exists(), "the note survived the worker"
    assert _course_runs(exercise) == 0

    counted = [outbox.counts_left(older_than_s=0), outbox.counts_left(older_than_s=0)]

    assert counted == [1, 0]
    assert outbox.run_count(run_id=run.pk) is False, "a late counter finds no note"
    assert _course_runs(exercise) == 1
    assert ExerciseSummary.objects.get(user=learner, exercise=exercise).runs == 1
    live = _counts(exercise.chapter.course)
    course_counts_rebuild(course=exercise.chapter.course)
    assert _counts(exercise.chapter.course) == live


@pytest.mark.services
def test_the_dashboard_shows_a_run_within_two_seconds_of_its_end(
    run_worker, web_server, make_learner, make_exercise, make_user
):
    exercise = make_exercise(check_code="def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n")
    course = exercise.chapter.course
    learner = _enrolled(make_learner, exercise)
    instructor = make_user(User.Role.INSTRUCTOR)
    course.instructors.add(instructor)
    token, board_token = Token.objects.create(user=learner).key, Token.objects.create(user=instructor).key

    def dashboard_row() -> dict:
        body = dashboard_read(web_server, board_token, course)
        return next(row for row in body["exercises"] if row["exercise"] == exercise.pk)

    assert dashboard_row()["runs"] == 0
    run_id = submit(web_server, token, exercise, "x = 2")
    with open_stream(web_server, token, run_id) as response:
        status = sse_frames(response.iter_lines(decode_unicode=True))[-1]["data"]
    ended_at = time.monotonic()
    assert (status["status"], status["passed"]) == ("succeeded", True)

    row = wait_until("the dashboard to show the run", lambda: (r := dashboard_row())["runs"] == 1 and r)
    shown_after_s = time.monotonic() - ended_at

    assert shown_after_s <= 2.0, f"the dashboard showed the run {shown_after_s:.2f} s after its end"
    assert (row["learners_ran"], row["learners_passed"]) == (1, 1)
    assert not RunToCount.objects.filter(run_id=run_id).exists()


def test_a_run_is_counted_once_however_many_counters_try(learner, make_exercise):
    exercise = make_exercise()
    Enrolment.objects.create(user=learner, course=exercise.chapter.course)
    run = Run.objects.create(user=learner, exercise=exercise, status="succeeded", finished_at=timezone.now())
    outbox.run_count_note(run_id=run.pk)

    fresh = outbox.counts_left(older_than_s=60)
    tries = [outbox.run_count(run_id=run.pk), outbox.run_count(run_id=run.pk)]
    swept = outbox.counts_left(older_than_s=0)

    assert fresh == 0, "the sweeper leaves a note its live worker is about to count"
    assert tries == [True, False]
    assert swept == 0
    assert _course_runs(exercise) == 1


def test_a_rebuild_counts_the_runs_still_noted_and_forgets_their_notes(learner, make_exercise):
    exercise = make_exercise()
    course = exercise.chapter.course
    Enrolment.objects.create(user=learner, course=course)
    run = Run.objects.create(user=learner, exercise=exercise, status="succeeded", finished_at=timezone.now())
    outbox.run_count_note(run_id=run.pk)

    rollups_rebuild(course=course)
    late = outbox.counts_left(older_than_s=0)

    assert late == 0
    assert _course_runs(exercise) == 1

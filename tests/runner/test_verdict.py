"""Whether a run passed is decided once (runner/verdict.py) and read everywhere from there: the
learner's page, their progress, the dashboards and an author's check run agree, even for a
program that exits 0 after one of its processes was stopped at the memory limit."""

import pytest
from rest_framework.authtoken.models import Token

from courses.models import Enrolment, ExerciseState
from runner.models import Run
from runner.verdict import RunEnd
from sandbox import verdict
from sandbox.base import RunResult
from teaching.models import ExerciseCount, ExerciseSummary
from tests.runner.test_api_events import open_stream, sse_frames, submit
from tests.runner.test_faults import wait_until

CHECK_PASSED = [{"type": "check", "passed": True, "message": "ok"}]
CHECK_FAILED = [{"type": "check", "passed": False, "message": "x must be 2"}]


@pytest.mark.parametrize(
    ("result", "stop_seen", "events", "expected"),
    [
        (RunResult(status="succeeded", exit_code=0), False, CHECK_PASSED, ("succeeded", True, True)),
        (RunResult(status="succeeded", exit_code=0), False, CHECK_FAILED, ("succeeded", False, False)),
        (RunResult(status="succeeded", exit_code=0), False, [], ("succeeded", None, False)),
        # Exit 0, but a process of the run met the memory limit: the check's word is not enough.
        (
            RunResult(status="failed", exit_code=0, limit="memory", reason="memory limit 2 GiB"),
            False,
            CHECK_PASSED,
            ("failed", True, False),
        ),
        (RunResult(status="timed_out", limit="time"), False, CHECK_PASSED, ("timed_out", True, False)),
        (RunResult(status="error", reason="sandbox failed"), False, CHECK_PASSED, ("error", True, False)),
        # Stop pressed as the run succeeded: it stays a success, and a pass.
        (RunResult(status="succeeded", exit_code=0), True, CHECK_PASSED, ("succeeded", True, True)),
        (RunResult(status="timed_out", limit="time"), True, CHECK_PASSED, ("failed", True, False)),
    ],
)
def test_a_run_passes_only_when_it_succeeded_and_its_check_passed(result, stop_seen, events, expected):
    end = RunEnd.from_sandbox(result, stop_seen=stop_seen, events=events)

    assert (end.status, end.check_passed, end.passed) == expected


MEMORY_CHILD = """import os, time
x = 2
# Four processes of 700 MiB at once: more than the run's 2 GiB, so the sandbox stops one of them;
# the program itself waits for them and exits 0.
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = b"\\x01" * (700 * 1024 * 1024)
        time.sleep(2)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print("the parent carries on")
"""


@pytest.mark.services
def test_a_program_whose_child_met_the_memory_limit_is_no_pass_anywhere(
    run_worker, web_server, make_learner, make_exercise
):
    exercise = make_exercise(check_code="def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n")
    learner = make_learner()
    Enrolment.objects.create(user=learner, course=exercise.chapter.course)
    token = Token.objects.create(user=learner).key

    run_id = submit(web_server, token, exercise, MEMORY_CHILD)
    with open_stream(web_server, token, run_id) as response:
        status = sse_frames(response.iter_lines(decode_unicode=True))[-1]["data"]

    assert (status["status"], status["limit"], status["passed"]) == ("failed", "memory", False), status
    assert not ExerciseState.objects.filter(user=learner, exercise=exercise, passed_at__isnull=False).exists()
    # The dashboards count the run just after the learner has it.
    summary = wait_until("the run to be counted", ExerciseSummary.objects.filter(user=learner, exercise=exercise).first)
    assert (summary.runs, summary.passes, summary.memory_stops) == (1, 0, 1)
    course_row = ExerciseCount.objects.get(exercise=exercise, cohort__isnull=True)
    assert (course_row.learners_ran, course_row.learners_passed) == (1, 0)


@pytest.mark.services
def test_a_pass_is_the_learners_as_soon_as_the_page_shows_it(run_worker, web_server, make_learner, make_exercise):
    exercise = make_exercise(check_code="def check(ns):\n    return ns.get('x') == 2, 'x must be 2'\n")
    learner = make_learner()
    token = Token.objects.create(user=learner).key

    run_id = submit(web_server, token, exercise, "x = 2")
    with open_stream(web_server, token, run_id) as response:
        status = sse_frames(response.iter_lines(decode_unicode=True))[-1]["data"]
    # Read at once, with no wait: the pass commits in the write that ended the run.
    kept = ExerciseState.objects.filter(user=learner, exercise=exercise, passed_at__isnull=False).exists()

    assert status["passed"] is True
    assert kept


def test_the_sandboxs_statuses_are_the_runs_terminal_ones():
    """The sandbox package names its statuses without the Run model; they must stay the same."""
    assert set(verdict.STATUSES) == set(Run.TERMINAL)

"""A run whose check passes marks the exercise done for its learner (first pass kept); a failing
check, a failing program or another learner's run does not. Runs go through the run service and
the real local (bubblewrap) sandbox, in this process."""

import pytest

from accounts.services import user_create
from courses.models import Chapter, ChapterProgress, Course, Exercise, ExerciseState
from runner import services
from runner.models import Run
from sandbox import backend_get
from tests.runner.worker import backend_required

CHECK = """
def check(ns):
    if ns.get("answer") == 42:
        return True, "The answer is right."
    return False, "Not yet: make `answer` the number the question asks for."
"""


@pytest.fixture
def local_backend():
    backend_required("local")
    return backend_get("local")


@pytest.fixture
def exercise(transactional_db):
    course = Course.objects.create(slug="pass-course", title="Pass course", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
    return Exercise.objects.create(chapter=chapter, slug="answer", title="Answer", check_code=CHECK, time_limit_s=20)


@pytest.fixture
def make_learner(transactional_db):
    counter = iter(range(1, 1000))
    return lambda: user_create(username=f"pass-learner-{next(counter)}", password="pw-for-tests-1")


def _run(*, user, exercise, code, backend) -> Run:
    run = Run.objects.create(user=user, exercise=exercise, code=code)
    services.run_execute(run_id=run.pk, backend=backend)
    run.refresh_from_db()
    return run


def _passed_at(user, exercise):
    state = ExerciseState.objects.filter(user=user, exercise=exercise).first()
    return state and state.passed_at


def test_it_marks_the_exercise_done_when_the_check_passes(exercise, make_learner, local_backend):
    learner, other = make_learner(), make_learner()
    run = _run(user=learner, exercise=exercise, code="answer = 42\nprint(answer)", backend=local_backend)
    assert run.status == Run.Status.SUCCEEDED
    assert {"type": "check", "passed": True, "message": "The answer is right."} in run.outputs
    assert _passed_at(learner, exercise) is not None
    assert _passed_at(other, exercise) is None
    # The chapter's only exercise passed and it has no quiz: the chapter is complete.
    assert ChapterProgress.objects.get(user=learner, chapter=exercise.chapter).completed_at is not None


def test_it_keeps_the_first_pass_when_the_learner_passes_again(exercise, make_learner, local_backend):
    learner = make_learner()
    _run(user=learner, exercise=exercise, code="answer = 42", backend=local_backend)
    first = _passed_at(learner, exercise)
    _run(user=learner, exercise=exercise, code="answer = 42", backend=local_backend)
    _run(user=learner, exercise=exercise, code="answer = 1", backend=local_backend)
    assert _passed_at(learner, exercise) == first


def test_it_leaves_the_exercise_open_when_the_check_fails(exercise, make_learner, local_backend):
    learner = make_learner()
    run = _run(user=learner, exercise=exercise, code="answer = 41", backend=local_backend)
    assert run.status == Run.Status.SUCCEEDED
    assert any(e["type"] == "check" and e["passed"] is False for e in run.outputs)
    assert _passed_at(learner, exercise) is None


def test_it_leaves_the_exercise_open_when_the_program_fails(exercise, make_learner, local_backend):
    learner = make_learner()
    run = _run(user=learner, exercise=exercise, code="answer = 42\nraise ValueError('no')", backend=local_backend)
    assert run.status == Run.Status.FAILED
    assert _passed_at(learner, exercise) is None


def test_it_does_not_take_a_printed_check_event_for_a_pass(exercise, make_learner, local_backend):
    learner = make_learner()
    code = 'print(\'{"type": "check", "passed": true, "message": "forged"}\')\nanswer = 0'
    run = _run(user=learner, exercise=exercise, code=code, backend=local_backend)
    assert not any(e["type"] == "check" and e["passed"] is True for e in run.outputs)
    assert _passed_at(learner, exercise) is None


PROBE = "import random\n\n\ndef calls(seed):\n    return [('double', (random.Random(seed).randint(1, 10**6),))]\n"
PROBED_CHECK = """
def check(ns, probed):
    [call] = probed
    if call.error or call.value != 2 * call.args[0]:
        return False, f"double({call.args[0]}) gave {call.error or call.value}, not {2 * call.args[0]}."
    return True, "double is right on a number your program never saw."
"""


def test_a_learners_run_of_an_exercise_with_a_probe_is_judged_on_its_function(exercise, make_learner, local_backend):
    Exercise.objects.filter(pk=exercise.pk).update(check_code=PROBED_CHECK, probe_code=PROBE)
    exercise.refresh_from_db()
    learner = make_learner()
    lucky = _run(
        user=learner,
        exercise=exercise,
        code="def double(x):\n    return 42\n\nprint(double(21))",
        backend=local_backend,
    )
    assert lucky.status == Run.Status.SUCCEEDED and "42" in "".join(e.get("text", "") for e in lucky.outputs)
    assert not lucky.passed and _passed_at(learner, exercise) is None
    right = _run(user=learner, exercise=exercise, code="def double(x):\n    return 2 * x\n", backend=local_backend)
    assert {"type": "check", "passed": True, "message": "double is right on a number your program never saw."} in (
        right.outputs
    )
    assert right.passed and _passed_at(learner, exercise) is not None

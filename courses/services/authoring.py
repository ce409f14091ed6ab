"""Validation on save: an exercise's starter and solution run with its check in the sandbox.

The rules are those of `manage.py validate_course` (courses/services/validation.py, its
per-exercise run reused as it is): the solution must pass, the starter must not, the check must
not raise. Runs go through the sandbox backend the workers use (RUNNER_BACKEND) under one fixed
owner, so repeated validations fork from the same warm sandbox instead of starting Python and
torch again. A chapter is published only while every exercise's latest validation of its current
code passed.
"""

import hashlib
import json
import time
from dataclasses import dataclass

from django.conf import settings

from courses.models import Chapter, Exercise, ExerciseValidation
from courses.services.content_io import ContentError, ExerciseSpec, _check_python
from courses.services.validation import Validation, _check_exercise, _Run
from runner.sandbox import backend_get
from runner.sandbox.harness import CHECK_BROKEN

# Every validation shares the warm sandboxes of this one owner, never a learner's.
VALIDATION_OWNER = "admin-validate"
OUTPUT_SHOWN = 4000

_backends: dict = {}


def _sandbox(name: str):
    # One backend object per process: its warm pool lives on it.
    if name not in _backends:
        _backends[name] = backend_get(name)
    return _backends[name]


def exercise_code_digest(*, exercise: Exercise | ExerciseSpec, modules: tuple) -> str:
    """What a validation judged: the code, the time limit and the course's modules."""
    made_of = [
        exercise.starter_code,
        exercise.check_code,
        exercise.solution_code,
        int(exercise.time_limit_s),
        bool(exercise.needs_gpu),
        sorted(modules),
    ]
    return hashlib.sha256(json.dumps(made_of).encode()).hexdigest()


def course_modules(*, chapter: Chapter) -> tuple:
    return tuple(chapter.course.modules.order_by("name").values_list("name", "source"))


def _output(run: _Run) -> str:
    parts = []
    for event in run.events:
        if event.get("type") == "stream":
            parts.append(event.get("text", ""))
        elif event.get("type") == "error":
            parts.append("\n".join(event.get("traceback") or [f"{event.get('ename')}: {event.get('evalue')}"]) + "\n")
    text = "".join(parts)
    return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + "\n… (cut)"


def _run_summary(role: str, run: _Run | None) -> dict | None:
    if run is None:
        return None
    check = run.checks[-1] if run.checks else None
    return {
        "role": role,
        "status": run.status,
        "reason": run.reason,
        "duration_ms": run.duration_ms,
        "passed": run.passed,
        "check": check.get("message", "") if check else None,
        "output": _output(run),
    }


@dataclass
class _Result:
    ok: bool
    problems: list[str]
    runs: list[dict]
    notes: list[str]


def _validate_spec(*, spec: ExerciseSpec, chapter: Chapter, modules: tuple, backend: str) -> _Result:
    rel = f"chapters/{chapter.number:02d}-{chapter.slug}"
    report = Validation()
    # Syntax first, with the line: a broken file never reaches the sandbox.
    for code, suffix, needs_check in (
        (spec.starter_code, ".py", False),
        (spec.check_code, ".check.py", True),
        (spec.solution_code, ".solution.py", False),
    ):
        if code:
            try:
                _check_python(code, file=f"{rel}/{spec.slug}{suffix}", needs_check=needs_check)
            except ContentError as error:
                report.add(error.file, error.line, error.problem)
    if report.problems:
        return _Result(False, [p.text() for p in report.problems], [], [])
    if spec.needs_gpu:
        note = "Not run here: the exercise needs a GPU, and validation runs on this machine's CPU."
        return _Result(True, [], [], [note])
    starter, solution = _check_exercise(
        rel, spec, _sandbox(backend), modules, report, timings=False, owner=VALIDATION_OWNER
    )
    for role, run in (("starter", starter), ("solution", solution)):
        if run is not None and any(check.get("message") == CHECK_BROKEN for check in run.checks):
            # The harness hides a check's traceback from learners; the author learns where it broke.
            report.add(
                f"{rel}/{spec.slug}.check.py",
                1,
                f"the check raised an exception on the {role} code instead of returning (passed, message)",
            )
    runs = [summary for summary in (_run_summary("starter", starter), _run_summary("solution", solution)) if summary]
    return _Result(not report.problems, [p.text() for p in report.problems], runs, report.notes)


def exercise_spec(*, exercise: Exercise) -> ExerciseSpec:
    return ExerciseSpec(
        slug=exercise.slug,
        title=exercise.title,
        instructions=exercise.instructions,
        starter_code=exercise.starter_code,
        check_code=exercise.check_code,
        solution_code=exercise.solution_code,
        time_limit_s=exercise.time_limit_s,
        needs_gpu=exercise.needs_gpu,
        position=exercise.position,
    )


def exercise_validate(*, exercise: Exercise, backend: str | None = None) -> ExerciseValidation:
    """Run the exercise's starter and solution with its check now, and keep the verdict."""
    backend = backend or settings.RUNNER_BACKEND
    modules = course_modules(chapter=exercise.chapter)
    started = time.monotonic()
    result = _validate_spec(
        spec=exercise_spec(exercise=exercise), chapter=exercise.chapter, modules=modules, backend=backend
    )
    took_ms = int((time.monotonic() - started) * 1000)
    validation, _ = ExerciseValidation.objects.update_or_create(
        exercise=exercise,
        defaults={
            "digest": exercise_code_digest(exercise=exercise, modules=modules),
            "ok": result.ok,
            "problems": result.problems,
            "runs": result.runs,
            "notes": result.notes,
            "backend": _sandbox(backend).name,
            "took_ms": took_ms,
        },
    )
    return validation


def exercise_validation_current(*, exercise: Exercise, modules: tuple | None = None) -> ExerciseValidation | None:
    """The exercise's stored validation when it judged the code the exercise has now."""
    modules = course_modules(chapter=exercise.chapter) if modules is None else modules
    validation = ExerciseValidation.objects.filter(exercise=exercise).first()
    if validation and validation.digest == exercise_code_digest(exercise=exercise, modules=modules):
        return validation
    return None


def exercise_validate_if_stale(*, exercise: Exercise, backend: str | None = None) -> ExerciseValidation:
    return exercise_validation_current(exercise=exercise) or exercise_validate(exercise=exercise, backend=backend)


def spec_problems(*, spec: ExerciseSpec, chapter: Chapter, backend: str | None = None) -> list[str]:
    """Validate code that is not saved yet (an admin form about to publish a chapter), reusing a
    stored verdict of the same code."""
    modules = course_modules(chapter=chapter)
    digest = exercise_code_digest(exercise=spec, modules=modules)
    stored = ExerciseValidation.objects.filter(
        exercise__chapter=chapter, exercise__slug=spec.slug, digest=digest
    ).first()
    if stored is not None:
        return list(stored.problems)
    return _validate_spec(
        spec=spec, chapter=chapter, modules=modules, backend=backend or settings.RUNNER_BACKEND
    ).problems


def chapter_publish_problems(*, chapter: Chapter, backend: str | None = None) -> list[str]:
    """Why the chapter cannot be published, one sentence per failing exercise (empty: it can).
    Exercises whose code changed since their last validation are validated now."""
    problems = []
    for exercise in chapter.exercises.order_by("position"):
        validation = exercise_validate_if_stale(exercise=exercise, backend=backend)
        if not validation.ok:
            problems.append(f"Exercise '{exercise.slug}' fails validation: {'; '.join(validation.problems)}")
    return problems

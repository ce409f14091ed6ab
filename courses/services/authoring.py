"""Validation on save: an exercise's starter and solution run with its check in the sandbox.

The rules are those of `manage.py validate_course` (courses/services/validation.py, its
per-exercise run reused as it is): the solution must pass, the starter must not, the check must
not raise. The runs happen where learners' runs happen: a Celery worker (the web app holds no
sandbox; in production only workers reach the Docker engine), under one fixed owner, so repeated
validations fork from the same warm sandbox in that worker instead of starting Python and torch
again. The task carries the code itself and answers on a Redis list the admin's request waits on,
so it needs neither the database nor the admin's transaction to have committed. Without Redis
(`make run`'s embedded broker) the web process runs the sandbox itself.

A chapter is published only while every exercise's latest validation of its current code passed,
whichever door publishes it: the admin's chapter form, `manage.py import_course` and the admin's
zip import (course_import_published).
"""

import hashlib
import json
import time
import uuid
from dataclasses import asdict, dataclass

import redis
from django.conf import settings
from django.db import transaction

from courses.models import Chapter, Course, Exercise, ExerciseValidation
from courses.services.content_io import ContentError, ExerciseSpec, course_import
from courses.services.content_io.importer import ImportReport
from courses.services.content_io.rules import check_python
from courses.services.validation import Validation, exercise_check
from ecplatform import limits
from sandbox.checking import CheckedRun, check_sandbox

# Every validation shares the warm sandboxes of this one owner, never a learner's.
VALIDATION_OWNER = "admin-validate"
OUTPUT_SHOWN = 4000
# Two runs at the cap, a cold start, and the queue: past this the admin is told no worker answered.
WORKER_WAIT_S = 2 * limits.WALL_CAP_S + 60
REPLY_TTL_S = 600


def _sandbox(name: str):
    # The process's own backend: in a worker, validations share the learners' warm pool (and its
    # RUNNER_WARM_MAX) rather than keeping a pool of their own.
    return check_sandbox(name, shared=True)


def _code(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def exercise_code_digest(*, exercise: Exercise | ExerciseSpec, modules: tuple) -> str:
    """What a validation judged: the code, the time limit and the course's modules."""
    made_of = [
        # As the sandbox gets it: a browser's CRLF line ends and the admin form's trimming change nothing.
        *(
            _code(text)
            for text in (exercise.starter_code, exercise.check_code, exercise.solution_code, exercise.probe_code)
        ),
        int(exercise.time_limit_s),
        bool(exercise.needs_gpu),
        sorted(modules),
        _tricks(exercise),
    ]
    return hashlib.sha256(json.dumps(made_of).encode()).hexdigest()


def _tricks(exercise: Exercise | ExerciseSpec) -> list[list[str]]:
    if isinstance(exercise, ExerciseSpec):
        pairs = exercise.tricks
    else:
        pairs = list(exercise.tricks.values_list("name", "code")) if exercise.pk else []
    return sorted([name, _code(code)] for name, code in pairs)


def course_modules(*, chapter: Chapter) -> tuple:
    return tuple(chapter.course.modules.order_by("name").values_list("name", "source"))


def _output(run: CheckedRun) -> str:
    parts = []
    for event in run.events:
        if event.get("type") == "stream":
            parts.append(event.get("text", ""))
        elif event.get("type") == "error":
            parts.append("\n".join(event.get("traceback") or [f"{event.get('ename')}: {event.get('evalue')}"]) + "\n")
    text = "".join(parts)
    return text if len(text) <= OUTPUT_SHOWN else text[:OUTPUT_SHOWN] + "\n… (cut)"


def _run_summary(role: str, run: CheckedRun | None) -> dict | None:
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
    backend: str = ""


def _validate_spec(*, spec: ExerciseSpec, chapter: Chapter, modules: tuple, backend: str | None) -> _Result:
    """Syntax here; the sandbox runs in a worker, or in this process when a backend is
    named (scripts, benchmarks) or there is no Redis."""
    rel = f"chapters/{chapter.number:02d}-{chapter.slug}"
    report = Validation()
    # Syntax first, with the line: a broken file never reaches the sandbox.
    for code, suffix, defines in (
        (spec.starter_code, ".py", ""),
        (spec.check_code, ".check.py", "check"),
        (spec.solution_code, ".solution.py", ""),
        (spec.probe_code, ".probe.py", "calls"),
    ):
        if code:
            try:
                check_python(code, file=f"{rel}/{spec.slug}{suffix}", defines=defines)
            except ContentError as error:
                report.add(error.file, error.line, error.problem)
    if report.problems:
        return _Result(False, [p.text() for p in report.problems], [], [])
    # A GPU exercise is validated on its CPU path, the one it takes on a platform with no GPU
    # worker: its code must run and pass there too.
    if backend is None and settings.REDIS_URL:
        return _validate_in_worker(spec=spec, rel=rel, part=chapter.number, modules=modules)
    return _run_in_sandbox(
        spec=spec, rel=rel, part=chapter.number, modules=modules, backend=backend or settings.RUNNER_BACKEND
    )


_worker_seen_at = 0.0
WORKER_SEEN_S = 30.0


def _worker_answers() -> bool:
    """Whether a worker answers a ping (remembered a while): with none, an admin saving a chapter
    hears so at once instead of waiting for the validation's whole time limit."""
    global _worker_seen_at
    if time.monotonic() - _worker_seen_at < WORKER_SEEN_S:
        return True
    from ecplatform.celery import app

    try:
        answered = bool(app.control.ping(timeout=1.0))
    except Exception:  # the broker is down: no worker can be reached either
        answered = False
    if answered:
        _worker_seen_at = time.monotonic()
    return answered


def _validate_in_worker(*, spec: ExerciseSpec, rel: str, part: int, modules: tuple) -> _Result:
    from courses.tasks import exercise_validate_in_sandbox_task

    if not _worker_answers():
        return _Result(
            False, ["No runner worker is running, so nothing was run: start one and press Validate."], [], []
        )
    reply_key = f"authoring:validation:{uuid.uuid4().hex}"
    payload = {"spec": asdict(spec), "rel": rel, "part": part, "modules": [list(module) for module in modules]}
    exercise_validate_in_sandbox_task.apply_async(args=[reply_key, payload], queue="cpu")
    # redis-py stops reading after 5 s by default; a first validation (a cold start) takes longer.
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5, socket_timeout=WORKER_WAIT_S + 10)
    try:
        reply = client.blpop([reply_key], timeout=WORKER_WAIT_S)
    finally:
        client.close()
    if reply is None:
        problem = f"No runner worker answered within {WORKER_WAIT_S} s: nothing was run. Is a worker running?"
        return _Result(False, [problem], [], [])
    return _Result(**json.loads(reply[1]))


def validation_serve(*, reply_key: str, payload: dict) -> None:
    """The worker's side: run the code in this worker's sandbox and answer on the reply list."""
    spec = ExerciseSpec(**payload["spec"])
    modules = tuple(tuple(module) for module in payload["modules"])
    result = _run_in_sandbox(
        spec=spec, rel=payload["rel"], part=payload.get("part"), modules=modules, backend=settings.RUNNER_BACKEND
    )
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5)
    try:
        client.rpush(reply_key, json.dumps(asdict(result)))
        client.expire(reply_key, REPLY_TTL_S)  # a reply no request waits for any more goes away
    finally:
        client.close()


def _run_in_sandbox(*, spec: ExerciseSpec, rel: str, part: int | None, modules: tuple, backend: str) -> _Result:
    report = Validation()
    starter, solution = exercise_check(
        rel, spec, _sandbox(backend), modules, report, timings=False, owner=VALIDATION_OWNER, part=part
    )
    for role, run in (("starter", starter), ("solution", solution)):
        if run is not None and run.check_broke:
            # The harness hides a check's traceback from learners; the author learns where it broke.
            report.add(
                f"{rel}/{spec.slug}.check.py",
                1,
                f"the check raised an exception on the {role} code instead of returning (passed, message)",
            )
    runs = [summary for summary in (_run_summary("starter", starter), _run_summary("solution", solution)) if summary]
    return _Result(
        not report.problems, [p.text() for p in report.problems], runs, report.notes, backend=_sandbox(backend).name
    )


def exercise_spec(*, exercise: Exercise) -> ExerciseSpec:
    return ExerciseSpec(
        slug=exercise.slug,
        title=exercise.title,
        instructions=exercise.instructions,
        starter_code=exercise.starter_code,
        check_code=exercise.check_code,
        solution_code=exercise.solution_code,
        probe_code=exercise.probe_code,
        tricks=list(exercise.tricks.values_list("name", "code")) if exercise.pk else [],
        time_limit_s=exercise.time_limit_s,
        needs_gpu=exercise.needs_gpu,
        position=exercise.position,
    )


def exercise_validate(*, exercise: Exercise, backend: str | None = None) -> ExerciseValidation:
    """Run the exercise's starter and solution with its check now, and keep the verdict. A named
    `backend` runs the sandbox in this process instead of a worker."""
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
            "backend": result.backend,
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
    return _validate_spec(spec=spec, chapter=chapter, modules=modules, backend=backend).problems


def chapter_publish_problems(*, chapter: Chapter, backend: str | None = None) -> list[str]:
    """Why the chapter cannot be published, one sentence per failing exercise (empty: it can).
    Exercises whose code changed since their last validation are validated now."""
    problems = []
    for exercise in chapter.exercises.order_by("position"):
        validation = exercise_validate_if_stale(exercise=exercise, backend=backend)
        if not validation.ok:
            problems.append(f"Exercise '{exercise.slug}' fails validation: {'; '.join(validation.problems)}")
    return problems


def course_publish_problems(*, course: Course, backend: str | None = None) -> list[str]:
    """Why the course's published chapters may not be published: one sentence per failing
    exercise, with its part (empty: they may). Validates what changed since its last validation."""
    problems = []
    for chapter in course.chapters.filter(published=True).order_by("number"):
        for problem in chapter_publish_problems(chapter=chapter, backend=backend):
            problems.append(f"Part {chapter.number} ({chapter.slug}): {problem}")
    return problems


class PublishRefusedError(Exception):
    """An import would publish a chapter whose exercise fails validation: nothing of it is kept."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


def course_import_published(*, path, backend: str | None = None) -> ImportReport:
    """Import a course folder (content_io.course_import) under the publish rule, all or nothing:
    every exercise of a chapter the folder publishes is validated (or has a current passing
    validation), else PublishRefusedError and nothing is written. A chapter the folder leaves
    unpublished is imported as a draft, unvalidated, as the admin allows. `backend` as in
    exercise_validate."""
    with transaction.atomic():
        report = course_import(path=path)
        problems = course_publish_problems(course=report.course, backend=backend)
        if problems:
            raise PublishRefusedError(problems)
    return report

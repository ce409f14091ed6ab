"""Reads for a learner's course record: the completion page and the downloads of their own code.

A record is always the requesting learner's: every query below filters on that one user, and
nothing here takes another learner's id, so no page or download can reach another learner's code,
answers or passes. Parts the learner may not open (coming soon) show as such, with none of their
exercises.
"""

import ast
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, DateTimeField, Model, OuterRef, Q, Subquery, UUIDField

from courses.models import Chapter, ChapterProgress, Course, CourseModule, Exercise, ExerciseState, Question, QuizAnswer
from courses.selectors import course_outline_for_user
from runner.selectors import run_list_for_outer_exercise, run_list_for_user

# A course module marks the part that adds its pieces with a comment line of its own, as
# lib/groundup.py does: "# Part 2: attention by hand". Names defined after it belong to that part.
PART_HEADER_RE = re.compile(r"^#\s*Part\s+(?P<number>\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ModulePiece:
    """A public name a course module defines: `from <module> import <name>` in later parts."""

    module: str
    name: str
    kind: str  # "class", "function" or "value"


def module_pieces(*, name: str, source: str) -> list[tuple[int | None, ModulePiece]]:
    """The public top-level names of a course module, each with the number of the part whose
    header comment it follows (None before any header). A module that does not parse has none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    headers = [
        (line_number, int(match.group("number")))
        for line_number, line in enumerate(source.splitlines(), start=1)
        if (match := PART_HEADER_RE.match(line))
    ]
    pieces = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found = [(node.name, "class")]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found = [(node.name, "function")]
        elif isinstance(node, ast.Assign):
            found = [(target.id, "value") for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found = [(node.target.id, "value")]
        else:
            found = []
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        part = next((number for line, number in reversed(headers) if line < start), None)
        pieces += [(part, ModulePiece(module=name, name=n, kind=k)) for n, k in found if not n.startswith("_")]
    return pieces


@dataclass(frozen=True)
class ExerciseRecord:
    exercise: Exercise
    number: int  # k in "Exercise k" of its part
    passed_at: datetime | None
    last_run_at: datetime | None
    # The learner's latest run of the exercise, with its code and outputs: loaded for the downloads
    # only (with_code=True), None otherwise or when they never ran it.
    last_run: Model | None = None  # a runner Run, read through runner.selectors

    @property
    def passed(self) -> bool:
        return self.passed_at is not None

    @property
    def ran(self) -> bool:
        return self.last_run_at is not None

    @property
    def code(self) -> str:
        """What the learner last ran, or the starter code when they never ran the exercise."""
        return self.last_run.code if self.last_run is not None else self.exercise.starter_code


@dataclass(frozen=True)
class QuizRecord:
    question_count: int = 0
    answered_right: int = 0  # questions answered right, at whatever try
    first_try_right: int = 0  # the quiz's score: right at the first try

    @property
    def finished(self) -> bool:
        return self.question_count > 0 and self.answered_right >= self.question_count


@dataclass(frozen=True)
class PartRecord:
    chapter: Chapter
    is_open: bool
    complete: bool = False
    quiz: QuizRecord = field(default_factory=QuizRecord)
    quiz_answered: bool = False  # any answer at all, right or wrong
    exercises: list[ExerciseRecord] = field(default_factory=list)
    pieces: list[ModulePiece] = field(default_factory=list)

    @property
    def exercises_passed(self) -> int:
        return sum(record.passed for record in self.exercises)

    @property
    def exercises_left(self) -> list[ExerciseRecord]:
        return [record for record in self.exercises if not record.passed]

    @property
    def state(self) -> str:
        """One of "soon" (cannot be opened yet), "complete", "started" or "not-started"."""
        if not self.is_open:
            return "soon"
        if self.complete:
            return "complete"
        if self.quiz_answered or any(record.ran or record.passed for record in self.exercises):
            return "started"
        return "not-started"


@dataclass(frozen=True)
class CourseRecord:
    course: Course
    parts: list[PartRecord]
    modules: list[tuple[str, str]]  # (name, source) of each course module, by name
    shared_pieces: list[ModulePiece]  # module names that follow no part header

    @property
    def open_parts(self) -> list[PartRecord]:
        return [part for part in self.parts if part.is_open]

    @property
    def complete_count(self) -> int:
        return sum(part.complete for part in self.open_parts)

    @property
    def finished(self) -> bool:
        """Every part of the course is open to the learner and complete."""
        return bool(self.parts) and all(part.is_open and part.complete for part in self.parts)

    @property
    def exercises(self) -> list[ExerciseRecord]:
        return [record for part in self.open_parts for record in part.exercises]


def _exercise_records(*, user, chapter_ids: list[int], with_code: bool) -> dict[int, list[ExerciseRecord]]:
    """The exercises of the given chapters with the learner's first pass and latest run, in one
    query (two with the runs' code): the cost does not grow with parts or exercises."""
    states = ExerciseState.objects.filter(user=user, exercise=OuterRef("pk"))
    runs = run_list_for_outer_exercise(user=user)
    exercises = (
        Exercise.objects.filter(chapter__in=chapter_ids)
        .annotate(
            learner_passed_at=Subquery(states.values("passed_at")[:1], output_field=DateTimeField()),
            last_run_id=Subquery(runs.values("pk")[:1], output_field=UUIDField()),
            last_run_at=Subquery(runs.values("created_at")[:1], output_field=DateTimeField()),
        )
        .order_by("chapter__number", "position")
    )
    if not with_code:
        exercises = exercises.defer("instructions", "starter_code", "check_code", "solution_code")
    else:
        exercises = exercises.defer("check_code", "solution_code")  # never leaves the platform
    exercises = list(exercises)
    last_runs = {}
    if with_code:
        ids = [exercise.last_run_id for exercise in exercises if exercise.last_run_id is not None]
        fields = ("id", "code", "outputs", "status", "created_at", "passed")
        last_runs = (
            {run.pk: run for run in run_list_for_user(user=user).filter(pk__in=ids).only(*fields)} if ids else {}
        )
    by_chapter: dict[int, list[ExerciseRecord]] = {}
    for exercise in exercises:
        records = by_chapter.setdefault(exercise.chapter_id, [])
        records.append(
            ExerciseRecord(
                exercise=exercise,
                number=len(records) + 1,
                passed_at=exercise.learner_passed_at,
                last_run_at=exercise.last_run_at,
                last_run=last_runs.get(exercise.last_run_id),
            )
        )
    return by_chapter


def _quiz_records(*, user, course: Course) -> tuple[dict[int, QuizRecord], set[int]]:
    """Each part's quiz as the learner's answers leave it, and the parts where they answered at all."""
    questions = dict(
        Question.objects.filter(chapter__course=course)
        .values("chapter")
        .annotate(n=Count("id"))
        .values_list("chapter", "n")
    )
    answers = {
        row["question__chapter"]: row
        for row in QuizAnswer.objects.filter(user=user, question__chapter__course=course)
        .values("question__chapter")
        .annotate(
            right=Count("question", filter=Q(is_correct=True), distinct=True),
            first_try=Count("id", filter=Q(is_correct=True, attempt=1)),
        )
    }
    records = {
        chapter_id: QuizRecord(
            question_count=count,
            answered_right=answers.get(chapter_id, {}).get("right", 0),
            first_try_right=answers.get(chapter_id, {}).get("first_try", 0),
        )
        for chapter_id, count in questions.items()
    }
    return records, set(answers)


def course_record_for_learner(*, user, course: Course, with_code: bool = False) -> CourseRecord:
    """Everything the completion page shows for `user` in `course` (an authenticated learner; the
    course already checked with course_get_for_user), in a fixed number of queries whatever the
    number of parts. `with_code`: also load the learner's last run of each exercise, for the
    downloads."""
    outline = course_outline_for_user(course=course, user=user)
    open_ids = [part.chapter.pk for part in outline if part.is_open]
    complete = set(
        ChapterProgress.objects.filter(user=user, chapter__in=open_ids, completed_at__isnull=False).values_list(
            "chapter_id", flat=True
        )
    )
    exercises = _exercise_records(user=user, chapter_ids=open_ids, with_code=with_code)
    quizzes, answered = _quiz_records(user=user, course=course)
    modules = list(CourseModule.objects.filter(course=course).order_by("name").values_list("name", "source"))
    pieces_by_part: dict[int | None, list[ModulePiece]] = {}
    for name, source in modules:
        for number, piece in module_pieces(name=name, source=source):
            pieces_by_part.setdefault(number, []).append(piece)
    parts = [
        PartRecord(
            chapter=part.chapter,
            is_open=part.is_open,
            complete=part.chapter.pk in complete,
            quiz=quizzes.get(part.chapter.pk, QuizRecord()) if part.is_open else QuizRecord(),
            quiz_answered=part.is_open and part.chapter.pk in answered,
            exercises=exercises.get(part.chapter.pk, []),
            pieces=pieces_by_part.get(part.chapter.number, []) if part.is_open else [],
        )
        for part in outline
    ]
    return CourseRecord(course=course, parts=parts, modules=modules, shared_pieces=pieces_by_part.get(None, []))

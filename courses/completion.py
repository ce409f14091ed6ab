"""A learner's course record, as the completion page and the downloads of their own code read it:
its shape, and the course module's pieces by part. The record is read above, where the learner's
runs are in reach (teaching.selectors.completion); the downloads (learner_code/) take it from there.
"""

import ast
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Model

from courses.models import Chapter, Course, Exercise
from courses.own_module import PART_HEADER_RE, statement_lines, statement_names


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
            kind = "class"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "function"
        else:
            kind = "value"
        start, _ = statement_lines(node)
        part = next((number for line, number in reversed(headers) if line < start), None)
        names = sorted(n for n in statement_names(node) if not n.startswith("_"))
        pieces += [(part, ModulePiece(module=name, name=n, kind=kind)) for n in names]
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
    # The pieces the learner wrote themselves in this part (their own module holds them).
    own_names: tuple[str, ...] = ()

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
    # (name, source) of each course module, by name: the learner's own copy, their pieces in it
    modules: list[tuple[str, str]]
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

"""What a course folder says, once read and checked: plain data, no database rows.

`course_read` (reader.py) turns a folder into a CourseSpec; `course_import` (importer.py) makes the
database match one. ContentError is how every step says a file is wrong.
"""

from dataclasses import dataclass, field

from courses.rules import DEFAULT_QUESTION_KIND


class ContentError(Exception):
    """A course folder that cannot be imported; the message names the file, the line and the problem."""

    def __init__(self, file: str, line: int | None, problem: str):
        self.file, self.line, self.problem = file, line, problem
        super().__init__(f"{file}:{line}: {problem}" if line else f"{file}: {problem}")


@dataclass
class ExerciseSpec:
    slug: str
    title: str
    instructions: str
    starter_code: str
    check_code: str
    solution_code: str
    time_limit_s: int
    needs_gpu: bool
    position: int = 0
    hints: list[str] = field(default_factory=list)
    probe_code: str = ""
    # Programs the check must fail: (name, code), from <slug>.trick-<name>.py.
    tricks: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ChoiceSpec:
    text: str
    is_correct: bool
    explanation: str


@dataclass
class QuestionSpec:
    prompt: str
    choices: list[ChoiceSpec]
    kind: str = DEFAULT_QUESTION_KIND  # its type (courses/rules.py): quiz.yaml's `type:`


@dataclass
class ChapterSpec:
    number: int
    slug: str
    title: str
    summary: str
    lede: str
    body: str
    published: bool
    exercises: list[ExerciseSpec]
    questions: list[QuestionSpec]


@dataclass
class TermSpec:
    term: str
    definition: str


@dataclass
class ModuleSpec:
    name: str
    source: str


@dataclass
class CourseSpec:
    slug: str
    title: str
    summary: str
    level: str
    published: bool
    instructors: list[str]
    instructors_line: int
    glossary: list[TermSpec]
    chapters: list[ChapterSpec]
    modules: list[ModuleSpec] = field(default_factory=list)

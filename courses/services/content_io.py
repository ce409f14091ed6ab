"""Courses as files: import a course folder into the database and export it back.

The format is described in courses/content/FORMAT.md. An import reads and checks every file
first (`course_read`), so a broken file stops it before anything is written; then it writes in
one transaction, creating, updating and removing rows so the database matches the folder. Rows
keep their ids across imports (learners' progress and runs point at them) and a row whose
content did not change is not written at all.
"""

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.contrib.auth import get_user_model
from django.db import transaction

from courses.models import (
    RESERVED_CHAPTER_SLUGS,
    TIME_LIMIT_MAX_S,
    Chapter,
    Choice,
    Course,
    CourseModule,
    Exercise,
    GlossaryTerm,
    Level,
    Question,
    module_name_problem,
)
from courses.services.chapters import PARK, chapter_reading_time_refresh, rows_park

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CHAPTER_DIR_RE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>.+)$")
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE_RE = re.compile(r"(`+).*?\1")
REFERENCE_RE = re.compile(r"\[\[(?P<inner>.*?)\]\]")
EXERCISE_LINE_RE = re.compile(r"^\[\[exercise:(?P<slug>[^\]]*)\]\]\s*$")
MIN_CHOICES, MAX_CHOICES = 2, 6
MAX_NUMBER = PARK - 1
YAML_WIDTH = 100
FOLD_OVER = 72  # a plain value this long still fits on its line after any key and indent

COURSE_KEYS = {"slug", "title", "level", "published", "summary", "instructors"}
CHAPTER_KEYS = {"slug", "title", "summary", "lede", "published", "exercises"}
EXERCISE_KEYS = {"slug", "title", "instructions", "time_limit", "gpu"}
QUESTION_KEYS = {"prompt", "choices"}
CHOICE_KEYS = {"text", "correct", "explanation"}
TERM_KEYS = {"term", "definition"}


class ContentError(Exception):
    """A course folder that cannot be imported; the message names the file, the line and the problem."""

    def __init__(self, file: str, line: int | None, problem: str):
        self.file, self.line, self.problem = file, line, problem
        super().__init__(f"{file}:{line}: {problem}" if line else f"{file}: {problem}")


# --- YAML that remembers where each mapping came from -------------------------------------


class _Map(dict):
    """A YAML mapping with the file line it starts on and the line of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _LineLoader(yaml.SafeLoader):
    line_offset = 0


def _construct_map(loader: _LineLoader, node: yaml.MappingNode):
    loader.flatten_mapping(node)
    mapping = _Map()
    mapping.line = node.start_mark.line + 1 + loader.line_offset
    mapping.key_lines = {}
    yield mapping
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is not text", key_node.start_mark)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"key '{key}' appears twice", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = value_node.start_mark.line + 1 + loader.line_offset


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def _load_yaml(text: str, *, file: str, line_offset: int = 0) -> Any:
    loader = _LineLoader(text)
    loader.line_offset = line_offset
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 + line_offset if mark else None
        raise ContentError(file, line, f"invalid YAML: {error.problem or error.context}") from None
    finally:
        loader.dispose()


# --- What a folder says, checked ------------------------------------------------------------


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


@dataclass
class ChoiceSpec:
    text: str
    is_correct: bool
    explanation: str


@dataclass
class QuestionSpec:
    prompt: str
    choices: list[ChoiceSpec]


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


class _Reader:
    """Typed access to one mapping of one file, with errors that point at the right line."""

    def __init__(
        self,
        value: Any,
        *,
        file: str,
        what: str,
        line: int,
        allowed: set[str],
        required: set[str],
        prefixed: bool = True,
    ):
        if not isinstance(value, dict):
            raise ContentError(file, line, f"{what} must be a mapping of keys to values")
        self.map, self.file, self.what, self.prefixed = value, file, what, prefixed
        self.line = getattr(value, "line", line)
        unknown = [key for key in value if key not in allowed]  # in file order
        if unknown:
            names = ", ".join(f"'{name}'" for name in unknown)
            plural = "s" if len(unknown) > 1 else ""
            raise self.error(unknown[0], f"unknown key{plural} {names} (allowed: {', '.join(sorted(allowed))})")
        missing = sorted(required - set(value))
        if missing:
            raise ContentError(file, self.line, self.message(f"missing required key '{missing[0]}'"))

    def line_of(self, key: str) -> int:
        return getattr(self.map, "key_lines", {}).get(key, self.line)

    def message(self, problem: str) -> str:
        return f"{self.what}: {problem}" if self.prefixed else problem

    def error(self, key: str, problem: str) -> ContentError:
        return ContentError(self.file, self.line_of(key), self.message(problem))

    def text(self, key: str, *, max_length: int | None = None, required: bool = False) -> str:
        value = self.map.get(key, "")
        if value is None:
            value = ""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(key, f"{key} must be text")
        value = str(value).replace("\r\n", "\n").strip()
        if required and not value:
            raise self.error(key, f"{key} must not be empty")
        if max_length and len(value) > max_length:
            raise self.error(key, f"{key} is {len(value)} characters long; at most {max_length} fit")
        return value

    def slug(self, key: str, *, max_length: int) -> str:
        value = self.text(key, required=True, max_length=max_length)
        if not SLUG_RE.match(value):
            raise self.error(key, f"{key} '{value}' must be lowercase letters, digits and hyphens")
        return value

    def flag(self, key: str, *, default: bool) -> bool:
        value = self.map.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"{key} must be true or false")
        return value

    def integer(self, key: str, *, default: int) -> int:
        value = self.map.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"{key} must be a whole number")
        return value

    def items(self, key: str) -> list:
        value = self.map.get(key) or []
        if not isinstance(value, list):
            raise self.error(key, f"{key} must be a list")
        return value


def _max_length(model, name: str) -> int:
    return model._meta.get_field(name).max_length


def _read_text(path: Path, *, file: str) -> str:
    try:
        return path.read_text(encoding="utf-8").replace("\r\n", "\n")
    except FileNotFoundError:
        raise ContentError(file, None, "file is missing") from None
    except UnicodeDecodeError as error:
        raise ContentError(file, None, f"not UTF-8 text ({error.reason})") from None


def _item_line(item: Any, parent: _Reader, key: str) -> int:
    return getattr(item, "line", parent.line_of(key))


def _read_course_file(root: Path) -> dict:
    file = "course.yaml"
    data = _load_yaml(_read_text(root / file, file=file), file=file)
    course = _Reader(
        data, file=file, what="course", line=1, allowed=COURSE_KEYS, required={"slug", "title"}, prefixed=False
    )
    level = course.text("level") or Level.BEGINNER
    if level not in Level.values:
        raise course.error("level", f"level must be one of {', '.join(Level.values)}, not '{level}'")
    instructors = []
    for item in course.items("instructors"):
        if not isinstance(item, str) or not item.strip():
            raise course.error("instructors", "instructors must be a list of usernames")
        instructors.append(item.strip())
    return {
        "slug": course.slug("slug", max_length=_max_length(Course, "slug")),
        "title": course.text("title", required=True, max_length=_max_length(Course, "title")),
        "summary": course.text("summary"),
        "level": level,
        "published": course.flag("published", default=False),
        "instructors": instructors,
        "instructors_line": course.line_of("instructors"),
    }


def _read_glossary(root: Path) -> list[TermSpec]:
    file = "glossary.yaml"
    if not (root / file).exists():
        return []
    data = _load_yaml(_read_text(root / file, file=file), file=file)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ContentError(file, 1, "the glossary must be a list of terms")
    terms: list[TermSpec] = []
    seen: dict[str, str] = {}
    for index, item in enumerate(data, start=1):
        entry = _Reader(
            item, file=file, what=f"term {index}", line=getattr(item, "line", 1), allowed=TERM_KEYS, required=TERM_KEYS
        )
        term = entry.text("term", required=True, max_length=_max_length(GlossaryTerm, "term"))
        if "|" in term or "[" in term or "]" in term:
            raise entry.error("term", f"term '{term}' must not contain '|', '[' or ']'")
        if term.lower() in seen:
            raise entry.error("term", f"term '{term}' repeats '{seen[term.lower()]}' (terms are unique ignoring case)")
        seen[term.lower()] = term
        terms.append(TermSpec(term=term, definition=entry.text("definition", required=True)))
    return terms


def _split_front_matter(text: str, *, file: str) -> tuple[str, str, int]:
    """Returns the front matter, the body and the file line the body starts on."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ContentError(file, 1, "must start with front matter: a line '---', YAML, a line '---'")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    raise ContentError(file, 1, "the front matter is not closed by a line '---'")


def _trim_blank_lines(body: str, first_line: int = 1) -> tuple[str, int]:
    """Drops blank lines around a body (the export writes one after the front matter) and
    returns the line the first kept one was on."""
    lines = body.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
        first_line += 1
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines), first_line


def _body_references(body: str, first_line: int) -> list[tuple[int, str, str]]:
    """The [[...]] references outside code: (file line, whole line, inner text)."""
    found = []
    fence = ""
    for offset, line in enumerate(body.split("\n")):
        opening = FENCE_RE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        for match in REFERENCE_RE.finditer(INLINE_CODE_RE.sub("", line)):
            found.append((first_line + offset, line, match.group("inner")))
    return found


def _check_python(code: str, *, file: str, needs_check: bool) -> None:
    try:
        # compile(), not only ast.parse(): it also refuses what only the compiler sees ('return'
        # outside a function, 'nonlocal' at module level), which would fail in every run.
        compile(code, file, "exec", dont_inherit=True)
        tree = ast.parse(code, filename=file)
    except SyntaxError as error:
        raise ContentError(file, error.lineno, f"Python syntax error: {error.msg}") from None
    if needs_check and not any(isinstance(node, ast.FunctionDef) and node.name == "check" for node in tree.body):
        raise ContentError(file, 1, "a check file must define check(ns)")


def _read_exercise(item: Any, *, index: int, chapter: _Reader, folder: Path, rel: str) -> ExerciseSpec:
    entry = _Reader(
        item,
        file=chapter.file,
        what=f"exercise {index}",
        line=_item_line(item, chapter, "exercises"),
        allowed=EXERCISE_KEYS,
        required={"slug", "title"},
    )
    slug = entry.slug("slug", max_length=_max_length(Exercise, "slug"))
    entry.what = f"exercise '{slug}'"
    time_limit = entry.integer("time_limit", default=20)
    if not 1 <= time_limit <= TIME_LIMIT_MAX_S:
        raise entry.error("time_limit", f"time_limit must be 1 to {TIME_LIMIT_MAX_S} seconds, not {time_limit}")
    starter_file = folder / f"{slug}.py"
    if not starter_file.is_file():
        raise entry.error("slug", f"its starter code file {rel}/{slug}.py is missing")
    check_code = solution_code = ""
    if (folder / f"{slug}.check.py").is_file():
        check_code = _read_text(folder / f"{slug}.check.py", file=f"{rel}/{slug}.check.py")
        _check_python(check_code, file=f"{rel}/{slug}.check.py", needs_check=True)
    if (folder / f"{slug}.solution.py").is_file():
        solution_code = _read_text(folder / f"{slug}.solution.py", file=f"{rel}/{slug}.solution.py")
        _check_python(solution_code, file=f"{rel}/{slug}.solution.py", needs_check=False)
    return ExerciseSpec(
        slug=slug,
        title=entry.text("title", required=True, max_length=_max_length(Exercise, "title")),
        instructions=entry.text("instructions"),
        starter_code=_read_text(starter_file, file=f"{rel}/{slug}.py"),
        check_code=check_code,
        solution_code=solution_code,
        time_limit_s=time_limit,
        needs_gpu=entry.flag("gpu", default=False),
    )


def _read_quiz(folder: Path, *, rel: str) -> list[QuestionSpec]:
    file = f"{rel}/quiz.yaml"
    if not (folder / "quiz.yaml").exists():
        return []
    data = _load_yaml(_read_text(folder / "quiz.yaml", file=file), file=file)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ContentError(file, 1, "a quiz must be a list of questions")
    questions = []
    for number, item in enumerate(data, start=1):
        question = _Reader(
            item,
            file=file,
            what=f"question {number}",
            line=getattr(item, "line", 1),
            allowed=QUESTION_KEYS,
            required=QUESTION_KEYS,
        )
        prompt = question.text("prompt", required=True)
        items = question.items("choices")
        if not MIN_CHOICES <= len(items) <= MAX_CHOICES:
            raise ContentError(
                file,
                question.line,
                f"question {number} has {len(items)} choices; a question has {MIN_CHOICES} to {MAX_CHOICES}",
            )
        choices = []
        for position, choice_item in enumerate(items, start=1):
            choice = _Reader(
                choice_item,
                file=file,
                what=f"question {number}, choice {position}",
                line=_item_line(choice_item, question, "choices"),
                allowed=CHOICE_KEYS,
                required={"text"},
            )
            spec = ChoiceSpec(
                text=choice.text("text", required=True, max_length=_max_length(Choice, "text")),
                is_correct=choice.flag("correct", default=False),
                explanation=choice.text("explanation"),
            )
            choices.append((choice.line, spec))
        correct = sum(spec.is_correct for _, spec in choices)
        if correct == 0:
            raise ContentError(file, question.line, f"question {number} has no correct choice")
        if correct > 1:
            raise ContentError(
                file, question.line, f"question {number} has {correct} correct choices; it needs exactly one"
            )
        for position, (line, spec) in enumerate(choices, start=1):
            if not spec.is_correct and not spec.explanation:
                raise ContentError(file, line, f"question {number}, choice {position} is wrong and has no explanation")
        questions.append(QuestionSpec(prompt=prompt, choices=[spec for _, spec in choices]))
    return questions


def _read_chapter(folder: Path, *, glossary: set[str]) -> ChapterSpec:
    rel = f"chapters/{folder.name}"
    file = f"{rel}/chapter.md"
    match = CHAPTER_DIR_RE.match(folder.name)
    if not match:
        raise ContentError(rel, None, "a chapter folder is named NN-<chapter slug>, e.g. 02-attention-by-hand")
    number = int(match.group("number"))
    if not 1 <= number <= MAX_NUMBER:
        raise ContentError(rel, None, f"chapter numbers run from 1 to {MAX_NUMBER}, not {number}")
    front, body, body_line = _split_front_matter(_read_text(folder / "chapter.md", file=file), file=file)
    data = _load_yaml(front, file=file, line_offset=1)
    chapter = _Reader(
        data, file=file, what="chapter", line=2, allowed=CHAPTER_KEYS, required={"slug", "title"}, prefixed=False
    )
    slug = chapter.slug("slug", max_length=_max_length(Chapter, "slug"))
    if slug != match.group("slug"):
        raise chapter.error("slug", f"slug '{slug}' does not match the folder name '{folder.name}'")
    if slug in RESERVED_CHAPTER_SLUGS:
        raise chapter.error("slug", f"slug '{slug}' is taken by a course page; choose another")

    exercises: dict[str, ExerciseSpec] = {}
    declared_on: dict[str, int] = {}
    for index, item in enumerate(chapter.items("exercises"), start=1):
        exercise = _read_exercise(item, index=index, chapter=chapter, folder=folder, rel=rel)
        declared_on.setdefault(exercise.slug, _item_line(item, chapter, "exercises"))
        if exercise.slug in exercises:
            raise ContentError(
                file, _item_line(item, chapter, "exercises"), f"exercise '{exercise.slug}' is declared twice"
            )
        exercises[exercise.slug] = exercise
    for path in sorted(folder.glob("*.py")):
        owner = path.name.removesuffix(".py").removesuffix(".check").removesuffix(".solution")
        if owner not in exercises:
            raise ContentError(f"{rel}/{path.name}", None, f"no exercise '{owner}' is declared in chapter.md")

    body, body_line = _trim_blank_lines(body, body_line)
    placed: list[str] = []
    for line_number, line, inner in _body_references(body, body_line):
        if inner.startswith("exercise:"):
            marker = EXERCISE_LINE_RE.match(line.strip())
            if not marker:
                raise ContentError(file, line_number, f"[[{inner}]] must stand on a line of its own")
            name = marker.group("slug")
            if name not in exercises:
                raise ContentError(file, line_number, f"[[exercise:{name}]] names no exercise of this chapter")
            if name in placed:
                raise ContentError(file, line_number, f"exercise '{name}' is placed more than once")
            placed.append(name)
            continue
        term = inner.rsplit("|", 1)[-1].strip()
        if term.lower() not in glossary:
            raise ContentError(file, line_number, f"[[{inner}]] names no glossary term ('{term}')")
    for name in exercises:
        if name not in placed:
            raise ContentError(
                file,
                declared_on[name],
                f"exercise '{name}' is not placed in the body (add a line [[exercise:{name}]])",
            )
    # The body decides the order in which a learner meets the exercises.
    for position, name in enumerate(placed, start=1):
        exercises[name].position = position

    return ChapterSpec(
        number=number,
        slug=slug,
        title=chapter.text("title", required=True, max_length=_max_length(Chapter, "title")),
        summary=chapter.text("summary", max_length=_max_length(Chapter, "summary")),
        lede=chapter.text("lede"),
        body=body,
        published=chapter.flag("published", default=False),
        exercises=sorted(exercises.values(), key=lambda exercise: exercise.position),
        questions=_read_quiz(folder, rel=rel),
    )


def _read_modules(root: Path) -> list[ModuleSpec]:
    """The course modules: every lib/<name>.py, importable by name in every exercise and check."""
    folder = root / "lib"
    if not folder.is_dir():
        return []
    modules = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name == "__pycache__":
            continue  # an editor's or Python's own files, not the author's
        file = f"lib/{path.name}"
        if path.is_dir() or path.suffix != ".py":
            raise ContentError(file, None, "lib/ holds course modules only: one <name>.py file each, no folders")
        problem = module_name_problem(path.stem)
        if problem:
            raise ContentError(file, None, problem)
        source = _read_text(path, file=file)
        _check_python(source, file=file, needs_check=False)
        modules.append(ModuleSpec(name=path.stem, source=source))
    return modules


def course_read(*, path: str | Path) -> CourseSpec:
    """Read and check a course folder without touching the database (usernames aside)."""
    root = Path(path)
    if not root.is_dir():
        raise ContentError(str(path), None, "not a folder")
    values = _read_course_file(root)
    glossary = _read_glossary(root)
    terms = {term.term.lower() for term in glossary}
    chapters: list[ChapterSpec] = []
    chapters_dir = root / "chapters"
    if chapters_dir.is_dir():
        by_number: dict[int, str] = {}
        for folder in sorted(p for p in chapters_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            chapter = _read_chapter(folder, glossary=terms)
            if chapter.number in by_number:
                raise ContentError(
                    f"chapters/{folder.name}",
                    None,
                    f"chapter number {chapter.number} is also {by_number[chapter.number]}",
                )
            by_number[chapter.number] = folder.name
            if any(other.slug == chapter.slug for other in chapters):
                raise ContentError(f"chapters/{folder.name}", None, f"another chapter has the slug '{chapter.slug}'")
            chapters.append(chapter)
    return CourseSpec(glossary=glossary, chapters=chapters, modules=_read_modules(root), **values)


# --- Writing ----------------------------------------------------------------------------------


@dataclass
class ImportReport:
    course: Course
    created: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    removed: Counter = field(default_factory=Counter)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.removed)

    def summary(self) -> str:
        def counts(counter: Counter) -> str:
            kinds = ["course", "chapter", "exercise", "question", "choice", "glossary term", "module"]
            parts = [f"{counter[kind]} {kind}{'s' if counter[kind] != 1 else ''}" for kind in kinds if counter[kind]]
            return ", ".join(parts) or "nothing"

        return (
            f"Imported course '{self.course.slug}': created {counts(self.created)}; "
            f"updated {counts(self.updated)}; removed {counts(self.removed)}."
        )


def _assign(obj, values: dict) -> bool:
    """Set fields on a row; True when any value differs from what it held."""
    changed = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed = True
    return changed


def _upsert(obj, values: dict, *, kind: str, report: ImportReport) -> None:
    is_new = obj.pk is None
    if _assign(obj, values) or is_new:
        obj.save()
        (report.created if is_new else report.updated)[kind] += 1


def _sync_glossary(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {term.term.lower(): term for term in course.glossary.all()}
    wanted = {term.term.lower(): term for term in spec.glossary}
    for key, term in existing.items():
        if key not in wanted:
            term.delete()
            report.removed["glossary term"] += 1
    for key, term in wanted.items():
        row = existing.get(key) or GlossaryTerm(course=course)
        _upsert(row, {"term": term.term, "definition": term.definition}, kind="glossary term", report=report)


def _sync_modules(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {module.name: module for module in course.modules.all()}
    wanted = {module.name: module for module in spec.modules}
    for name, module in existing.items():
        if name not in wanted:
            module.delete()
            report.removed["module"] += 1
    for name, module in wanted.items():
        row = existing.get(name) or CourseModule(course=course)
        _upsert(row, {"name": name, "source": module.source}, kind="module", report=report)


def _sync_exercises(chapter: Chapter, spec: ChapterSpec, report: ImportReport) -> None:
    existing = {exercise.slug: exercise for exercise in chapter.exercises.all()}
    wanted = {exercise.slug: exercise for exercise in spec.exercises}
    for slug, exercise in existing.items():
        if slug not in wanted:
            exercise.delete()
            report.removed["exercise"] += 1
    rows_park(
        rows=[e for s, e in existing.items() if s in wanted and e.position != wanted[s].position], field_name="position"
    )
    for exercise in spec.exercises:
        row = existing.get(exercise.slug) or Exercise(chapter=chapter)
        values = {
            "slug": exercise.slug,
            "position": exercise.position,
            "title": exercise.title,
            "instructions": exercise.instructions,
            "starter_code": exercise.starter_code,
            "check_code": exercise.check_code,
            "solution_code": exercise.solution_code,
            "time_limit_s": exercise.time_limit_s,
            "needs_gpu": exercise.needs_gpu,
        }
        _upsert(row, values, kind="exercise", report=report)


def _sync_quiz(chapter: Chapter, spec: ChapterSpec, report: ImportReport) -> None:
    existing = {question.position: question for question in chapter.questions.prefetch_related("choices")}
    for position, question in existing.items():
        if position > len(spec.questions):
            question.delete()
            report.removed["question"] += 1
    for position, question_spec in enumerate(spec.questions, start=1):
        question = existing.get(position) or Question(chapter=chapter, position=position)
        _upsert(question, {"prompt": question_spec.prompt}, kind="question", report=report)
        choices = {choice.position: choice for choice in question.choices.all()} if position in existing else {}
        for choice_position, choice in choices.items():
            if choice_position > len(question_spec.choices):
                choice.delete()
                report.removed["choice"] += 1
        # Wrong choices first: the one-correct-choice constraint must hold after every write,
        # also when the right answer moves from one choice to another.
        order = sorted(enumerate(question_spec.choices, start=1), key=lambda pair: pair[1].is_correct)
        for choice_position, choice_spec in order:
            row = choices.get(choice_position) or Choice(question=question, position=choice_position)
            values = {
                "text": choice_spec.text,
                "is_correct": choice_spec.is_correct,
                "explanation": choice_spec.explanation,
            }
            _upsert(row, values, kind="choice", report=report)


def _sync_chapters(course: Course, spec: CourseSpec, report: ImportReport) -> None:
    existing = {chapter.slug: chapter for chapter in course.chapters.all()}
    wanted = {chapter.slug: chapter for chapter in spec.chapters}
    for slug, chapter in existing.items():
        if slug not in wanted:
            chapter.delete()
            report.removed["chapter"] += 1
    rows_park(
        rows=[c for s, c in existing.items() if s in wanted and c.number != wanted[s].number], field_name="number"
    )
    for chapter_spec in spec.chapters:
        chapter = existing.get(chapter_spec.slug) or Chapter(course=course)
        values = {
            "number": chapter_spec.number,
            "slug": chapter_spec.slug,
            "title": chapter_spec.title,
            "summary": chapter_spec.summary,
            "lede": chapter_spec.lede,
            "body": chapter_spec.body,
            "published": chapter_spec.published,
        }
        _upsert(chapter, values, kind="chapter", report=report)
        _sync_exercises(chapter, chapter_spec, report)
        _sync_quiz(chapter, chapter_spec, report)
        chapter_reading_time_refresh(chapter=chapter)


def course_import(*, path: str | Path) -> ImportReport:
    """Create or update the course in a folder so the database says what the files say."""
    spec = course_read(path=path)
    users = {user.username: user for user in get_user_model().objects.filter(username__in=spec.instructors)}
    for username in spec.instructors:
        if username not in users:
            raise ContentError("course.yaml", spec.instructors_line, f"unknown instructor username '{username}'")

    with transaction.atomic():
        course = Course.objects.select_for_update().filter(slug=spec.slug).first() or Course()
        report = ImportReport(course=course)
        values = {
            "slug": spec.slug,
            "title": spec.title,
            "summary": spec.summary,
            "level": spec.level,
            "published": spec.published,
        }
        _upsert(course, values, kind="course", report=report)
        instructor_ids = {users[name].pk for name in spec.instructors}
        if set(course.instructors.values_list("pk", flat=True)) != instructor_ids:
            course.instructors.set(instructor_ids)
            if not report.created["course"]:
                report.updated["course"] = 1
        _sync_glossary(course, spec, report)
        _sync_modules(course, spec, report)
        _sync_chapters(course, spec, report)
    return report


# --- Export -----------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow=False, indentless=False):
        # Lists indented under their key, as the format's examples and most editors write them.
        return super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, data: str):
    # Multi-line text as a literal block, long lines folded: the files read like what an author
    # writes and diff line by line. Both styles load back to the same string.
    style = "|" if "\n" in data else ">" if len(data) > FOLD_OVER else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def _dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=YAML_WIDTH)


def _clean(text: str) -> str:
    return text.replace("\r\n", "\n").strip()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            _remove_tree(child)
        else:
            child.unlink()
    path.rmdir()


def course_export(*, course: Course, path: str | Path) -> None:
    """Write a course as a folder (FORMAT.md), byte for byte the same for the same rows.

    The folder's course.yaml, glossary.yaml, lib/ and chapters/ are replaced; other files in it
    are left alone. A folder that holds other things and no course.yaml is refused.
    """
    root = Path(path)
    if root.exists() and any(root.iterdir()) and not (root / "course.yaml").exists():
        raise ContentError(str(path), None, "the folder is not empty and holds no course.yaml; refusing to write there")
    root.mkdir(parents=True, exist_ok=True)
    for owned in ("chapters", "lib"):
        if (root / owned).is_dir():
            _remove_tree(root / owned)

    course_data = {
        "slug": course.slug,
        "title": course.title,
        "level": course.level,
        "published": course.published,
        "summary": _clean(course.summary),
        "instructors": sorted(course.instructors.values_list("username", flat=True)),
    }
    _write(root / "course.yaml", _dump_yaml(course_data))
    terms = sorted(course.glossary.all(), key=lambda term: (term.term.lower(), term.term))
    glossary = [{"term": term.term, "definition": _clean(term.definition)} for term in terms]
    _write(root / "glossary.yaml", _dump_yaml(glossary) if glossary else "[]\n")
    for module in course.modules.order_by("name"):
        _write(root / "lib" / f"{module.name}.py", module.source.replace("\r\n", "\n"))

    chapters = course.chapters.order_by("number").prefetch_related("exercises", "questions__choices")
    for chapter in chapters:
        folder = root / "chapters" / f"{chapter.number:02d}-{chapter.slug}"
        front = {"slug": chapter.slug, "title": chapter.title}
        # Optional text is left out when empty, as an author would write it.
        front.update(
            {
                key: _clean(value)
                for key, value in [("summary", chapter.summary), ("lede", chapter.lede)]
                if value.strip()
            }
        )
        front["published"] = chapter.published
        exercises = sorted(chapter.exercises.all(), key=lambda exercise: exercise.position)
        if exercises:
            front["exercises"] = [
                {
                    "slug": exercise.slug,
                    "title": exercise.title,
                    **({"instructions": _clean(exercise.instructions)} if exercise.instructions.strip() else {}),
                    "time_limit": exercise.time_limit_s,
                    "gpu": exercise.needs_gpu,
                }
                for exercise in exercises
            ]
        body, _ = _trim_blank_lines(chapter.body)
        _write(folder / "chapter.md", f"---\n{_dump_yaml(front)}---\n" + (f"\n{body}\n" if body else ""))
        for exercise in exercises:
            _write(folder / f"{exercise.slug}.py", exercise.starter_code.replace("\r\n", "\n"))
            if exercise.check_code:
                _write(folder / f"{exercise.slug}.check.py", exercise.check_code.replace("\r\n", "\n"))
            if exercise.solution_code:
                _write(folder / f"{exercise.slug}.solution.py", exercise.solution_code.replace("\r\n", "\n"))
        questions = sorted(chapter.questions.all(), key=lambda question: question.position)
        if questions:
            quiz = []
            for question in questions:
                choices = []
                for choice in sorted(question.choices.all(), key=lambda choice: choice.position):
                    item = {"text": choice.text}
                    if choice.is_correct:
                        item["correct"] = True
                    if choice.explanation.strip():
                        item["explanation"] = _clean(choice.explanation)
                    choices.append(item)
                quiz.append({"prompt": _clean(question.prompt), "choices": choices})
            _write(folder / "quiz.yaml", _dump_yaml(quiz))

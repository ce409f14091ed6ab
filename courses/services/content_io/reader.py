"""Reading a course folder (courses/content/FORMAT.md) into a CourseSpec, section by section:
course.yaml, glossary.yaml, each chapter's chapter.md with its exercise files and quiz.yaml, and
lib/. Every file is read and checked before anything is written; the first problem stops the read
with the file, the line and what is wrong."""

import glob
import re
from pathlib import Path
from typing import Any

from courses.models import (
    HINT_TEXT_MAX,
    RESERVED_CHAPTER_SLUGS,
    TIME_LIMIT_MAX_S,
    Chapter,
    Choice,
    Course,
    Exercise,
    ExerciseTrick,
    GlossaryTerm,
    Level,
    module_name_problem,
)
from courses.rules import DEFAULT_QUESTION_KIND, SLUG_RE, exercise_slugs_placed
from courses.services.content_io.rules import (
    CHAPTER_DIR_RE,
    CHAPTER_KEYS,
    CHOICE_KEYS,
    COURSE_KEYS,
    EXERCISE_KEYS,
    HINTS_MAX,
    MAX_NUMBER,
    QUESTION_KEYS,
    TERM_KEYS,
    chapter_body_check,
    check_python,
    question_check,
    question_kind_problem,
)
from courses.services.content_io.source import (
    MappingReader,
    field_max_length,
    item_line,
    load_yaml,
    read_text,
    split_front_matter,
    trim_blank_lines,
)
from courses.services.content_io.specs import (
    ChapterSpec,
    ChoiceSpec,
    ContentError,
    CourseSpec,
    ExerciseSpec,
    ModuleSpec,
    QuestionSpec,
    TermSpec,
)

# --- course.yaml and glossary.yaml -------------------------------------------------------------


def _read_course_file(root: Path) -> dict:
    file = "course.yaml"
    data = load_yaml(read_text(root / file, file=file), file=file)
    course = MappingReader(
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
        "slug": course.slug("slug", max_length=field_max_length(Course, "slug")),
        "title": course.text("title", required=True, max_length=field_max_length(Course, "title")),
        "summary": course.text("summary"),
        "level": level,
        "published": course.flag("published", default=False),
        "instructors": instructors,
        "instructors_line": course.line_of("instructors"),
    }


def read_glossary(root: Path) -> list[TermSpec]:
    file = "glossary.yaml"
    if not (root / file).exists():
        return []
    data = load_yaml(read_text(root / file, file=file), file=file)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ContentError(file, 1, "the glossary must be a list of terms")
    terms: list[TermSpec] = []
    seen: dict[str, str] = {}
    for index, item in enumerate(data, start=1):
        entry = MappingReader(
            item, file=file, what=f"term {index}", line=getattr(item, "line", 1), allowed=TERM_KEYS, required=TERM_KEYS
        )
        term = entry.text("term", required=True, max_length=field_max_length(GlossaryTerm, "term"))
        if "|" in term or "[" in term or "]" in term:
            raise entry.error("term", f"term '{term}' must not contain '|', '[' or ']'")
        if term.lower() in seen:
            raise entry.error("term", f"term '{term}' repeats '{seen[term.lower()]}' (terms are unique ignoring case)")
        seen[term.lower()] = term
        terms.append(TermSpec(term=term, definition=entry.text("definition", required=True)))
    return terms


# --- Chapters: chapter.md, the exercise files, quiz.yaml; and lib/ -------------------------------


# The files of an exercise besides its starter code, <slug><kind>.py, and its trick programs,
# <slug>.trick-<name>.py.
EXERCISE_FILE_KINDS = (".check", ".solution", ".probe")
TRICK_SUFFIX_RE = re.compile(r"\.trick-[^.]*$")


def _read_exercise(item: Any, *, index: int, chapter: MappingReader, folder: Path, rel: str) -> ExerciseSpec:
    entry = MappingReader(
        item,
        file=chapter.file,
        what=f"exercise {index}",
        line=item_line(item, chapter, "exercises"),
        allowed=EXERCISE_KEYS,
        required={"slug", "title"},
    )
    slug = entry.slug("slug", max_length=field_max_length(Exercise, "slug"))
    entry.what = f"exercise '{slug}'"
    time_limit = entry.integer("time_limit", default=20)
    if not 1 <= time_limit <= TIME_LIMIT_MAX_S:
        raise entry.error("time_limit", f"time_limit must be 1 to {TIME_LIMIT_MAX_S} seconds, not {time_limit}")
    starter_file = folder / f"{slug}.py"
    if not starter_file.is_file():
        raise entry.error("slug", f"its starter code file {rel}/{slug}.py is missing")
    check_code = solution_code = probe_code = ""
    if (folder / f"{slug}.probe.py").is_file():
        probe_code = read_text(folder / f"{slug}.probe.py", file=f"{rel}/{slug}.probe.py")
        check_python(probe_code, file=f"{rel}/{slug}.probe.py", defines="calls")
    if (folder / f"{slug}.check.py").is_file():
        check_code = read_text(folder / f"{slug}.check.py", file=f"{rel}/{slug}.check.py")
        check_python(check_code, file=f"{rel}/{slug}.check.py", defines="check")
    if (folder / f"{slug}.solution.py").is_file():
        solution_code = read_text(folder / f"{slug}.solution.py", file=f"{rel}/{slug}.solution.py")
        check_python(solution_code, file=f"{rel}/{slug}.solution.py")
    return ExerciseSpec(
        slug=slug,
        title=entry.text("title", required=True, max_length=field_max_length(Exercise, "title")),
        instructions=entry.text("instructions"),
        starter_code=read_text(starter_file, file=f"{rel}/{slug}.py"),
        check_code=check_code,
        solution_code=solution_code,
        probe_code=probe_code,
        tricks=_read_tricks(folder, slug=slug, rel=rel),
        time_limit_s=time_limit,
        needs_gpu=entry.flag("gpu", default=False),
        hints=_read_hints(entry),
    )


def _read_tricks(folder: Path, *, slug: str, rel: str) -> list[tuple[str, str]]:
    """<slug>.trick-<name>.py: programs the check must fail, (name, code) in name order."""
    tricks = []
    for path in sorted(folder.glob(f"{glob.escape(slug)}.trick-*.py")):
        name = path.name.removesuffix(".py").removeprefix(f"{slug}.trick-")
        file = f"{rel}/{path.name}"
        if not SLUG_RE.match(name) or len(name) > field_max_length(ExerciseTrick, "name"):
            raise ContentError(
                file, None, f"a trick program's name '{name}' must be lowercase letters, digits and hyphens"
            )
        code = read_text(path, file=file)
        check_python(code, file=file)
        tricks.append((name, code))
    return tricks


def _read_hints(entry: MappingReader) -> list[str]:
    """`hints:` is a list of Markdown texts, revealed to the learner in this order."""
    items = entry.items("hints")
    if len(items) > HINTS_MAX:
        raise entry.error("hints", f"{len(items)} hints; at most {HINTS_MAX} are shown one by one")
    hints = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, dict):
            raise entry.error(
                "hints",
                f"hint {number} must be text; YAML read a mapping: put a hint with ': ' in it in quotes or after '>'",
            )
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise entry.error("hints", f"hint {number} must be text")
        text = str(item).replace("\r\n", "\n").strip()
        if not text:
            raise entry.error("hints", f"hint {number} is empty")
        if len(text) > HINT_TEXT_MAX:
            raise entry.error("hints", f"hint {number} is {len(text)} characters long; at most {HINT_TEXT_MAX} fit")
        hints.append(text)
    return hints


def _read_quiz(folder: Path, *, rel: str) -> list[QuestionSpec]:
    file = f"{rel}/quiz.yaml"
    if not (folder / "quiz.yaml").exists():
        return []
    data = load_yaml(read_text(folder / "quiz.yaml", file=file), file=file)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ContentError(file, 1, "a quiz must be a list of questions")
    questions = []
    for number, item in enumerate(data, start=1):
        question = MappingReader(
            item,
            file=file,
            what=f"question {number}",
            line=getattr(item, "line", 1),
            allowed=QUESTION_KEYS,
            required={"prompt", "choices"},
        )
        prompt = question.text("prompt", required=True)
        kind = question.text("type") or DEFAULT_QUESTION_KIND
        problem = question_kind_problem(kind)
        if problem:
            raise question.error("type", problem)
        choices, lines = [], []
        for position, choice_item in enumerate(question.items("choices"), start=1):
            choice = MappingReader(
                choice_item,
                file=file,
                what=f"question {number}, choice {position}",
                line=item_line(choice_item, question, "choices"),
                allowed=CHOICE_KEYS,
                required={"text"},
            )
            choices.append(
                ChoiceSpec(
                    text=choice.text("text", required=True, max_length=field_max_length(Choice, "text")),
                    is_correct=choice.flag("correct", default=False),
                    explanation=choice.text("explanation"),
                )
            )
            lines.append(choice.line)
        question_check(choices, kind=kind, number=number, file=file, line=question.line, choice_lines=lines)
        questions.append(QuestionSpec(prompt=prompt, choices=choices, kind=kind))
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
    front, body, body_line = split_front_matter(read_text(folder / "chapter.md", file=file), file=file)
    data = load_yaml(front, file=file, line_offset=1)
    chapter = MappingReader(
        data, file=file, what="chapter", line=2, allowed=CHAPTER_KEYS, required={"slug", "title"}, prefixed=False
    )
    slug = chapter.slug("slug", max_length=field_max_length(Chapter, "slug"))
    if slug != match.group("slug"):
        raise chapter.error("slug", f"slug '{slug}' does not match the folder name '{folder.name}'")
    if slug in RESERVED_CHAPTER_SLUGS:
        raise chapter.error("slug", f"slug '{slug}' is taken by a course page; choose another")

    exercises: dict[str, ExerciseSpec] = {}
    declared_on: dict[str, int] = {}
    for index, item in enumerate(chapter.items("exercises"), start=1):
        exercise = _read_exercise(item, index=index, chapter=chapter, folder=folder, rel=rel)
        declared_on.setdefault(exercise.slug, item_line(item, chapter, "exercises"))
        if exercise.slug in exercises:
            raise ContentError(
                file, item_line(item, chapter, "exercises"), f"exercise '{exercise.slug}' is declared twice"
            )
        exercises[exercise.slug] = exercise
    for path in sorted(folder.glob("*.py")):
        stem = TRICK_SUFFIX_RE.sub("", path.name.removesuffix(".py"))
        owner = next((stem.removesuffix(kind) for kind in EXERCISE_FILE_KINDS if stem.endswith(kind)), stem)
        if owner not in exercises:
            raise ContentError(f"{rel}/{path.name}", None, f"no exercise '{owner}' is declared in chapter.md")

    body, body_line = trim_blank_lines(body, body_line)
    chapter_body_check(body, first_line=body_line, file=file, declared_on=declared_on, glossary=glossary)
    # The body decides the order in which a learner meets the exercises.
    for position, name in enumerate(exercise_slugs_placed(body), start=1):
        exercises[name].position = position

    return ChapterSpec(
        number=number,
        slug=slug,
        title=chapter.text("title", required=True, max_length=field_max_length(Chapter, "title")),
        summary=chapter.text("summary", max_length=field_max_length(Chapter, "summary")),
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
        source = read_text(path, file=file)
        check_python(source, file=file)
        modules.append(ModuleSpec(name=path.stem, source=source))
    return modules


def course_read(*, path: str | Path) -> CourseSpec:
    """Read and check a course folder without touching the database (usernames aside)."""
    root = Path(path)
    if not root.is_dir():
        raise ContentError(str(path), None, "not a folder")
    values = _read_course_file(root)
    glossary = read_glossary(root)
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

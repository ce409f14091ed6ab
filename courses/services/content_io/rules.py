"""The format's own rules (courses/content/FORMAT.md) that are not about one file's syntax:
names, keys, Python that must compile, the references in a chapter's Markdown and what a quiz
question holds. The rules the admin shares with the files (exercise markers, question types) are
courses/rules.py; here they are applied to files, with each problem at its line."""

import ast
import re
from collections.abc import Sequence

from courses.rules import SLUG_RE, ChoiceLike, exercise_marker_problems, prose_references, question_type_get
from courses.services.chapters import PARK
from courses.services.content_io.specs import ContentError

__all__ = ["SLUG_RE", "body_references", "chapter_body_check", "check_python", "question_check"]

CHAPTER_DIR_RE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>.+)$")
MAX_NUMBER = PARK - 1

COURSE_KEYS = {"slug", "title", "level", "published", "summary", "instructors"}
CHAPTER_KEYS = {"slug", "title", "summary", "lede", "published", "exercises"}
EXERCISE_KEYS = {"slug", "title", "instructions", "hints", "time_limit", "gpu"}
# An exercise's hints: revealed one at a time, so a handful is plenty.
HINTS_MAX = 6
QUESTION_KEYS = {"type", "prompt", "choices"}
CHOICE_KEYS = {"text", "correct", "explanation"}
TERM_KEYS = {"term", "definition"}

# The [[...]] references of a text outside its code: (file line, whole line, inner text).
body_references = prose_references


def check_python(code: str, *, file: str, defines: str = "") -> None:
    """`code` compiles; and defines the function `defines` at its top level, when one is named
    (a check file's check(ns), a probe file's calls(seed))."""
    try:
        # compile(), not only ast.parse(): it also refuses what only the compiler sees ('return'
        # outside a function, 'nonlocal' at module level), which would fail in every run.
        compile(code, file, "exec", dont_inherit=True)
        tree = ast.parse(code, filename=file)
    except SyntaxError as error:
        raise ContentError(file, error.lineno, f"Python syntax error: {error.msg}") from None
    if defines and not any(isinstance(node, ast.FunctionDef) and node.name == defines for node in tree.body):
        kind, signature = ("check", "check(ns)") if defines == "check" else ("probe", f"{defines}(seed)")
        raise ContentError(file, 1, f"a {kind} file must define {signature}")


def question_kind_problem(kind: str) -> str:
    """Why quiz.yaml's `type:` cannot be `kind` (empty: it can)."""
    try:
        question_type_get(kind)
    except KeyError as unknown:
        return str(unknown.args[0])
    return ""


def question_check(
    choices: Sequence[ChoiceLike], *, kind: str, number: int, file: str, line: int, choice_lines: Sequence[int]
) -> None:
    """Question `number` of a quiz.yaml, of type `kind`, holding `choices`: the first rule it
    breaks stops the read, at the question's line or at the choice's."""
    for problem in question_type_get(kind).problems(choices):
        if problem.choice is not None:
            where, subject = choice_lines[problem.choice - 1], f"question {number}, choice {problem.choice}"
        else:
            where, subject = line, f"question {number}"
        raise ContentError(file, where, f"{subject} {problem.message}")


def chapter_body_check(
    body: str, *, first_line: int, file: str, declared_on: dict[str, int], glossary: set[str]
) -> None:
    """The body's references: exercise markers that agree with the exercises declared in the front
    matter (`declared_on`: slug -> its line there), glossary references that name a term. The first
    problem in the body's order stops the read; an exercise the body never places is named at its
    line in the front matter."""
    found = exercise_marker_problems(body, slugs=list(declared_on), first_line=first_line)
    in_body = [(problem.line, problem.message) for problem in found if problem.line is not None]
    for line_number, _, inner in prose_references(body, first_line):
        term = inner.rsplit("|", 1)[-1].strip()
        if not inner.startswith("exercise:") and term.lower() not in glossary:
            in_body.append((line_number, f"[[{inner}]] names no glossary term ('{term}')"))
    if in_body:
        line, message = min(in_body, key=lambda problem: problem[0])
        raise ContentError(file, line, message)
    for problem in found:  # only exercises the body does not place are left
        raise ContentError(file, declared_on[problem.subject], problem.message)

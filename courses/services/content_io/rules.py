"""The format's own rules (courses/content/FORMAT.md) that are not about one file's syntax:
names, keys, Python that must compile, and the references in a chapter's Markdown."""

import ast
import re

from courses.services.chapters import PARK
from courses.services.content_io.specs import ContentError

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CHAPTER_DIR_RE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>.+)$")
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
INLINE_CODE_RE = re.compile(r"(`+).*?\1")
REFERENCE_RE = re.compile(r"\[\[(?P<inner>.*?)\]\]")
EXERCISE_LINE_RE = re.compile(r"^\[\[exercise:(?P<slug>[^\]]*)\]\]\s*$")
MIN_CHOICES, MAX_CHOICES = 2, 6
MAX_NUMBER = PARK - 1

COURSE_KEYS = {"slug", "title", "level", "published", "summary", "instructors"}
CHAPTER_KEYS = {"slug", "title", "summary", "lede", "published", "exercises"}
EXERCISE_KEYS = {"slug", "title", "instructions", "time_limit", "gpu"}
QUESTION_KEYS = {"prompt", "choices"}
CHOICE_KEYS = {"text", "correct", "explanation"}
TERM_KEYS = {"term", "definition"}


def body_references(body: str, first_line: int) -> list[tuple[int, str, str]]:
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


def check_python(code: str, *, file: str, needs_check: bool) -> None:
    try:
        # compile(), not only ast.parse(): it also refuses what only the compiler sees ('return'
        # outside a function, 'nonlocal' at module level), which would fail in every run.
        compile(code, file, "exec", dont_inherit=True)
        tree = ast.parse(code, filename=file)
    except SyntaxError as error:
        raise ContentError(file, error.lineno, f"Python syntax error: {error.msg}") from None
    if needs_check and not any(isinstance(node, ast.FunctionDef) and node.name == "check" for node in tree.body):
        raise ContentError(file, 1, "a check file must define check(ns)")

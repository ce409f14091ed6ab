"""A learner's own copy of the course's module: what their passing solutions define, in place of
the course's pieces, in what their later runs import.

A write-the-body exercise (one with a probe) asks the learner for the functions and classes its
starter defines: its pieces, named as the course module names them (`groundup.attention`). When a
run of it passes, the learner's definitions of those pieces (with the imports, helpers and plain
constants they stand on, the probe's rule) are kept (courses.models.OwnPiece). A run of an
exercise of part N then imports a module made for it from the course's (`module_for_run`):

- each earlier part's pieces: the learner's own where they wrote them, the course's where the
  learner passed that part (every exercise of it), none otherwise;
- part N's own pieces, but never those the exercise asks the learner to write;
- nothing of a later part.

A name left out answers an import with a sentence that says why. The check always imports the
course's module as written (RunRequest.check_modules): it judges with the reference, never with
the learner's pieces. Pure functions of source text: the selectors read the rows.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache

from sandbox.harness.probe import definitions

# A course module marks the part that adds its pieces with a comment line of its own, as
# lib/groundup.py does: "# Part 2: attention by hand". Names defined after it belong to that part.
PART_HEADER_RE = re.compile(r"^#\s*Part\s+(?P<number>\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class OwnSection:
    """The learner's own pieces from one exercise, as their module holds them."""

    part: int
    exercise_title: str
    names: tuple[str, ...]
    source: str


def piece_names(starter_code: str) -> list[str]:
    """What a write-the-body exercise asks the learner to write: the top-level functions and
    classes its starter defines."""
    try:
        tree = ast.parse(starter_code)
    except (SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def defined_names(source: str) -> set[str]:
    """Every name a module's top level defines (functions, classes, assigned names)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return set().union(*(statement_names(node) for node in tree.body))


def statement_lines(node: ast.stmt) -> tuple[int, int]:
    """First and last line (1-based) of a top-level statement, its decorators included."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return start, node.end_lineno or node.lineno


def statement_names(node: ast.stmt) -> set[str]:
    """The names a top-level statement defines."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def own_source(code: str, pieces: Collection[str], course_names: Collection[str]) -> str:
    """The part of a learner's passing code that their module keeps: their imports, functions,
    classes and plain constants (what the probe ran), less any definition that would replace a
    name of the course's module other than the pieces asked for (a helper the learner happened to
    call `causal_mask` must not change what every later part imports). "" when nothing defines a
    piece."""
    try:
        kept = definitions(code).body
    except (SyntaxError, ValueError):
        return ""
    lines = code.splitlines()
    taken = set(course_names) - set(pieces)
    text, last = "", None
    for node in kept:
        if statement_names(node) & taken:
            continue
        start, end = statement_lines(node)
        imports = isinstance(node, ast.Import | ast.ImportFrom)
        gap = "" if last is None else "\n" if imports and last else "\n\n\n"
        text += gap + "\n".join(lines[start - 1 : end])
        last = imports
    defines = set().union(*(statement_names(node) for node in kept)) if kept else set()
    if not defines & set(pieces):
        return ""
    return text + "\n"


@dataclass(frozen=True)
class _Section:
    part: int | None  # None: the lines before the first part's header
    text: str
    names: frozenset[str]  # the top-level names it defines
    spans: tuple[tuple[str, int, int], ...]  # (name, first line, last line) within `text`, 1-based


@lru_cache(maxsize=16)
def _sections(source: str) -> tuple[_Section, ...] | None:
    """The module cut at its part headers; None when it has none (or does not parse): such a
    module is the same for every run."""
    lines = source.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if PART_HEADER_RE.match(line)]
    if not starts:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    bounds = [(None, 0), *((int(PART_HEADER_RE.match(lines[i]).group("number")), i) for i in starts)]
    sections = []
    for index, (part, first) in enumerate(bounds):
        last = bounds[index + 1][1] if index + 1 < len(bounds) else len(lines)
        spans = []
        for node in tree.body:
            start, end = statement_lines(node)
            if first < start <= last:
                spans += [(name, start - first, end - first) for name in statement_names(node)]
        sections.append(
            _Section(
                part=part,
                text="".join(lines[first:last]),
                names=frozenset(name for name, _, _ in spans),
                spans=tuple(spans),
            )
        )
    return tuple(sections)


def has_parts(source: str) -> bool:
    """Whether the module marks its parts (else every run imports it as written)."""
    return _sections(source) is not None


def course_names(source: str) -> set[str]:
    """Every top-level name the course's module defines in a part."""
    sections = _sections(source) or ()
    return set().union(*(s.names for s in sections if s.part is not None)) if sections else set()


def _without(section: _Section, names: Collection[str]) -> str:
    lines = section.text.splitlines(keepends=True)
    for name, start, end in section.spans:
        if name in names:
            lines[start - 1 : end] = [f"# ({name}: yours to write in this exercise)\n"] + [""] * (end - start)
    return "".join(lines)


def module_for_run(
    source: str,
    *,
    part: int,
    asked: Collection[str] = (),
    passed_parts: Collection[int] | None = None,
    own: Iterable[OwnSection] = (),
    name: str = "",
) -> str:
    """The course module `source` as a run of an exercise of `part` imports it (see the module's
    docstring). `asked`: the pieces the exercise asks for; `passed_parts`: the parts whose
    reference pieces the learner may have (None: every earlier part, as for the course's staff);
    `own`: the learner's own pieces; `name`: the module's import name. A module without part
    headers comes back unchanged."""
    sections = _sections(source)
    if sections is None:
        return source
    own_by_part: dict[int, list[OwnSection]] = {}
    for section in own:
        own_by_part.setdefault(section.part, []).append(section)
    withheld: dict[str, str] = {}
    out = []
    for section in sections:
        if section.part is None:
            out.append(section.text)
            continue
        number = section.part
        if number > part:
            for piece in section.names:
                withheld[piece] = f"{piece} comes from Part {number}, a later part: this exercise runs without it."
            continue
        if number == part:
            out.append(_without(section, asked))
            for piece in set(asked) & section.names:
                withheld[piece] = f"{piece} is what this exercise asks you to write: define it in your code."
        elif passed_parts is None or number in passed_parts:
            out.append(section.text)
        else:
            header = section.text.splitlines(keepends=True)[0]
            out.append(header + "# (the course's pieces of this part come once you have passed it)\n\n")
            for piece in section.names:
                withheld[piece] = (
                    f"{piece} comes from Part {number}, which you have not passed yet: pass its exercises "
                    "(or write it yourself there) and it is yours here."
                )
        for mine in own_by_part.get(number, []):
            if number == part and set(mine.names) & set(asked):
                continue  # this exercise's own earlier pass: the program defines them again
            names = ", ".join(mine.names)
            text = _without_self_imports(mine.source, name)
            out.append(f"\n# Your own {names}, from your passing run of {mine.exercise_title!r}.\n{text}\n")
            for piece in mine.names:
                withheld.pop(piece, None)
    if withheld:
        # Right after the module's opening lines, so that an import of a name left out says why
        # even while the module itself runs.
        out.insert(1 if sections[0].part is None else 0, _refusals(withheld))
    return "".join(out)


@lru_cache(maxsize=1024)  # the same pieces go into every run of their learner
def _without_self_imports(source: str, module: str) -> str:
    """A learner's definitions, less their `from <module> import ...` lines: in the module they are
    the module's own names, found when a function runs (run while the module itself runs, such an
    import would ask for a name not there yet, or one this run leaves out)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == module:
            start, end = statement_lines(node)
            lines[start - 1 : end] = [""] * (end - start + 1)
    return "".join(lines)


def _refusals(withheld: dict[str, str]) -> str:
    """A module-level __getattr__ (PEP 562) that answers a name left out with the reason:
    `from groundup import <name>` gets an ImportError (an AttributeError there would come out as
    Python's bare "cannot import name"), and `groundup.<name>`, hasattr or getattr with a default
    an AttributeError, as for any missing attribute."""
    table = "".join(f"    {name!r}: {reason!r},\n" for name, reason in sorted(withheld.items()))
    return (
        "\n\n# Names this run leaves out, and why.\n"
        f"_LEFT_OUT = {{\n{table}}}\n\n\n"
        "def __getattr__(name):\n"
        "    if name not in _LEFT_OUT:\n"
        '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")\n'
        "    import dis\n"
        "    import sys\n"
        "\n"
        "    caller = sys._getframe(1)\n"
        '    if dis.opname[caller.f_code.co_code[caller.f_lasti]] == "IMPORT_FROM":\n'
        "        raise ImportError(_LEFT_OUT[name], name=name)\n"
        "    raise AttributeError(_LEFT_OUT[name], name=name)\n"
    )

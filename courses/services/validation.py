"""Validate a course folder without importing it (`manage.py validate_course`).

Everything the importer checks (`course_read`, reused as it is), then what an import cannot see:
glossary references anywhere in the text, formulas the renderer's parser refuses, constructs split
across lines (which the page shows as raw text), and every exercise run through the real sandbox:
the starter must run and not pass its check, the solution must pass it, and the check's messages
for the starter must not quote the solution's key lines, and every trick program kept beside an
exercise (<slug>.trick-<name>.py, written to pass without doing it) must fail. No hint may quote
a key line either. Across the whole course, the quizzes must not give their right answers away by
a pattern (`quiz_tells`).

With `warm=True` every run goes as one owner (WARM_OWNER), as a learner's runs do, so after the
first the runs find a warm sandbox and the timings are those a learner sees on a later run.
"""

import re
import statistics
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from latex2mathml.converter import convert as latex_to_mathml

from courses.own_module import module_for_run, piece_names
from courses.rules import FENCE_RE
from courses.services.content_io import ContentError, CourseSpec, ExerciseSpec, course_read
from courses.services.content_io.reader import read_glossary
from courses.services.content_io.rules import body_references
from courses.services.content_io.source import split_front_matter, trim_blank_lines
from courses.services.probe_names import probe_problems
from courses.services.quiz_tells import quiz_tells
from sandbox.checking import CheckedRun, CheckSandbox, check_sandbox, sandbox_check_run

INLINE_CODE_RE = re.compile(r"(`+).+?\1")
# The renderer's own patterns (courses/rendering.py): what it turns into MathML.
DISPLAY_MATH_RE = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
INLINE_MATH_RE = re.compile(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$")
UNKNOWN_COMMAND_RE = re.compile(r">(\\[A-Za-z]+)<")
BOLD_RE = re.compile(r"\*\*.+?\*\*")
REFERENCE_RE = re.compile(r"\[\[.*?\]\]")
# A solution line this short ("x = 1", "pass") says nothing about the answer.
KEY_LINE_MIN = 6
TIMING_RUNS = 3
# The one learner all runs of a warm validation belong to: a warm sandbox serves one owner only.
WARM_OWNER = "validate-course"


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    problem: str

    def text(self, root: str = "") -> str:
        path = f"{root.rstrip('/')}/{self.file}" if root else self.file
        return f"{path}:{self.line}: {self.problem}" if self.line else f"{path}: {self.problem}"


@dataclass
class Timing:
    exercise: str
    runs_ms: list[int]
    # Per run: whether it ran in a warm sandbox (a backend without warm sandboxes says False).
    warm: list[bool] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        """Of the warm runs when there are any: a cold start is not what a warm timing measures."""
        warm = [ms for ms, hot in zip(self.runs_ms, self.warm, strict=False) if hot]
        return statistics.median(warm or self.runs_ms)


@dataclass
class Validation:
    problems: list[Problem] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    exercises_run: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, file: str, line: int | None, problem: str) -> None:
        found = Problem(file, line or 0, problem)
        if found not in self.problems:  # the importer and the text checks may see the same one
            self.problems.append(found)

    @property
    def ok(self) -> bool:
        return not self.problems


def course_validate(
    *,
    path: str | Path,
    backend: CheckSandbox | str | None = "auto",
    timings: bool = False,
    warm: bool = False,
    on_exercise: Callable[[str], None] | None = None,
    only: Collection[str] = (),
) -> Validation:
    """Check a course folder; `backend=None` skips the sandbox runs. Touches no database.
    `warm`: run every exercise as one owner, so that runs after the first go to a warm sandbox.
    `only`: run only the exercises with these slugs (the text checks still cover the whole course)."""
    root = Path(path)
    report = Validation()
    spec: CourseSpec | None = None
    try:
        spec = course_read(path=root)
    except ContentError as error:
        report.add(error.file, error.line, error.problem)
    if not root.is_dir():
        return report
    _check_text(root, spec, report)
    if spec is not None:
        _check_hints(root, spec, report)
        _check_probes(spec, report)
        for problem in quiz_tells(spec):
            report.add("chapters", None, problem)
    if spec is not None and backend is not None:
        sandbox = check_sandbox(backend) if isinstance(backend, str) else backend
        owner = WARM_OWNER if warm else ""
        _check_exercises(spec, sandbox, report, timings=timings, owner=owner, on_exercise=on_exercise, only=only)
    report.problems.sort(key=lambda p: (p.file, p.line))
    return report


# --- The text ---------------------------------------------------------------------------------


def _glossary_terms(root: Path, spec: CourseSpec | None) -> set[str] | None:
    if spec is not None:
        return {term.term.lower() for term in spec.glossary}
    try:
        return {term.term.lower() for term in read_glossary(root)}
    except ContentError:
        return None  # already reported by the importer; references cannot be judged without it


def _check_text(root: Path, spec: CourseSpec | None, report: Validation) -> None:
    glossary = _glossary_terms(root, spec)
    chapters = root / "chapters"
    folders = sorted(p for p in chapters.iterdir() if p.is_dir()) if chapters.is_dir() else []
    for folder in folders:
        file = f"chapters/{folder.name}/chapter.md"
        try:
            text = (folder / "chapter.md").read_text(encoding="utf-8").replace("\r\n", "\n")
            _, body, body_line = split_front_matter(text, file=file)
        except (OSError, UnicodeDecodeError, ContentError):
            continue  # the importer has said what is wrong with the file
        body, body_line = trim_blank_lines(body, body_line)
        body_check(body, body_line, file=file, glossary=glossary, report=report)
        _check_front_matter(text, folder.name, file=file, glossary=glossary, report=report)


def body_check(body: str, first_line: int, *, file: str, glossary: set[str] | None, report: Validation) -> None:
    """A chapter body's glossary references, maths and constructs, into `report` (the admin's
    preview checks a body being edited with it)."""
    if glossary is not None:
        for line, _, inner in body_references(body, first_line):
            _check_reference(inner, glossary, file=file, line=line, report=report)
    prose = _prose(body)
    for line, latex in _formulas(prose, first_line):
        _check_maths(latex, file=file, line=line, report=report)
    for line, problem in _split_constructs(prose, first_line):
        report.add(file, line, problem)


def _check_front_matter(text: str, folder: str, *, file: str, glossary: set[str] | None, report: Validation) -> None:
    """Exercise instructions and hints are Markdown too, with references and maths (the page renders
    them with the glossary). Their folded YAML lines join before rendering, so only whole values count."""
    try:
        front = yaml.safe_load(split_front_matter(text, file=file)[0]) or {}
    except (yaml.YAMLError, ContentError):
        return
    lines = text.split("\n")
    exercises = front.get("exercises") if isinstance(front, dict) else None
    for exercise in exercises if isinstance(exercises, list) else []:
        if not isinstance(exercise, dict):
            continue
        slug = str(exercise.get("slug", ""))
        line = next(
            (n for n, t in enumerate(lines, start=1) if re.match(rf"\s*-?\s*slug:\s*{re.escape(slug)}\s*$", t)), 0
        )
        hints = exercise.get("hints")
        for markdown in [exercise.get("instructions"), *(hints if isinstance(hints, list) else [])]:
            if not isinstance(markdown, str):
                continue
            if glossary is not None:
                for _, _, inner in body_references(markdown, line):
                    _check_reference(inner, glossary, file=file, line=line, report=report)
            for _, latex in _formulas(_prose(markdown), line):
                _check_maths(latex, file=file, line=line, report=report)


def _check_reference(inner: str, glossary: set[str], *, file: str, line: int, report: Validation) -> None:
    if inner.startswith("exercise:"):
        return
    term = inner.rsplit("|", 1)[-1].strip()
    if term.lower() not in glossary:
        # Worded as the importer words it, so the same problem is listed once.
        report.add(file, line, f"[[{inner}]] names no glossary term ('{term}')")


def _prose(body: str) -> str:
    """The body with fenced listings blanked and inline code spaced out, line for line, so
    offsets still fall on the right line and nothing in code counts as maths or a reference."""
    out, fence = [], ""
    for line in body.split("\n"):
        opening = FENCE_RE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            out.append("")
            continue
        if opening:
            fence = opening.group(1)
            out.append("")
            continue
        out.append(INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), line.replace("\\$", "  ")))
    return "\n".join(out)


def _formulas(prose: str, first_line: int) -> Iterator[tuple[int, str]]:
    """(file line, LaTeX) of every formula, found as the renderer finds them, paragraph by
    paragraph (a blank line ends a paragraph, and the renderer never looks past it)."""
    offset = 0
    for paragraph in re.split(r"(\n[ \t]*\n)", prose):
        if paragraph.strip():
            for match in DISPLAY_MATH_RE.finditer(paragraph):
                yield first_line + prose.count("\n", 0, offset + match.start()), match.group(1)
            inline = DISPLAY_MATH_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), paragraph)
            for match in INLINE_MATH_RE.finditer(inline):
                yield first_line + prose.count("\n", 0, offset + match.start()), match.group(1)
        offset += len(paragraph)


def _check_maths(latex: str, *, file: str, line: int, report: Validation) -> None:
    shown = " ".join(latex.split())
    try:
        mathml = latex_to_mathml(latex.strip())
    except Exception as error:  # latex2mathml raises its own exception per kind of mistake
        name = re.sub(r"(?<!^)(?=[A-Z])", " ", type(error).__name__).lower().removesuffix(" error")
        report.add(file, line, f"maths does not parse: '{shown}' ({name})")
        return
    unknown = UNKNOWN_COMMAND_RE.search(mathml)
    if unknown:
        report.add(file, line, f"maths uses an unknown command {unknown.group(1)}: '{shown}'")
    stripped = latex.replace("\\{", "").replace("\\}", "")
    if stripped.count("{") != stripped.count("}"):
        report.add(file, line, f"maths has unbalanced braces: '{shown}'")


def _split_constructs(prose: str, first_line: int) -> Iterator[tuple[int, str]]:
    """Constructs that open on one line and close on a later one. The page shows them as raw
    text (inline maths, and anything that reaches past a paragraph), and even where Markdown
    would join them they are a trap for the next edit: each must sit on one line. Display maths
    is the exception when its `$$` lines stand alone around the formula."""
    opened: dict[str, int] = {}
    display_from = 0
    kinds = {
        "$": "inline maths ($...$)",
        "$$": "display maths ($$...$$)",
        "[[": "a reference [[...]]",
        "**": "bold text (**...**)",
    }
    for number, line in enumerate(prose.split("\n"), start=first_line):
        if line.strip() == "$$":
            display_from = 0 if display_from else number
            continue
        if not line.strip():
            if display_from:
                yield display_from, "display maths opened by this $$ line is not closed before the paragraph ends"
                display_from = 0
            opened.clear()
            continue
        if display_from:
            continue  # inside a display formula: LaTeX, not Markdown
        text = DISPLAY_MATH_RE.sub(" ", line)
        left = {"$$": text.count("$$")}
        text = text.replace("$$", " ")
        left["$"] = INLINE_MATH_RE.sub(" ", text).count("$")
        left["**"] = BOLD_RE.sub(" ", text).count("**")
        for kind, count in left.items():
            if kind in opened and count:
                del opened[kind]  # its first mark closes what an earlier line opened
                count -= 1
            if count % 2:
                opened[kind] = number
                yield number, f"{kinds[kind]} is split across lines: keep it on one line"
        unclosed = REFERENCE_RE.sub(" ", text)
        if "[[" in opened and "]]" in unclosed:
            del opened["[["]
        if unclosed.rfind("[[") > unclosed.rfind("]]"):
            opened["[["] = number
            yield number, f"{kinds['[[']} is split across lines: keep it on one line"
    if display_from:
        yield display_from, "display maths opened by this $$ line is never closed"


# --- The exercises, through the sandbox ------------------------------------------------------


def _run(
    sandbox: CheckSandbox, exercise: ExerciseSpec, code: str, modules: tuple, owner: str = "", part: int | None = None
) -> CheckedRun:
    """One run as a learner's would go: with `part`, the program imports the course's modules as
    an exercise of that part does (none of a later part's pieces, nor the ones it asks for:
    courses/own_module.py), and the check the modules as written."""
    program = modules
    if part is not None:
        asked = piece_names(exercise.starter_code) if exercise.probe_code else []
        program = tuple((name, module_for_run(source, part=part, asked=asked)) for name, source in modules)
    return sandbox_check_run(
        sandbox=sandbox,
        run_id=f"validate-{uuid.uuid4().hex[:12]}",
        code=code,
        check_code=exercise.check_code,
        probe_code=exercise.probe_code,
        time_limit_s=exercise.time_limit_s,
        modules=program,
        check_modules=() if program == modules else modules,
        owner=owner,
    )


def key_lines(*, solution: str, starter: str) -> list[tuple[int, str]]:
    """The solution's lines that differ from the starter: what the learner has to find."""
    given = {line.strip() for line in starter.split("\n")}
    return [
        (number, line.strip())
        for number, line in enumerate(solution.split("\n"), start=1)
        if len(line.strip()) >= KEY_LINE_MIN and line.strip() not in given
    ]


def hint_problem(hint: str, *, solution: str, starter: str) -> str:
    """Why `hint` cannot be shown (empty: it can). A hint may walk the learner up to the answer,
    never hand it over: like the check's messages, it quotes no key line of the solution."""
    flat = " ".join(hint.split())
    for _number, line in key_lines(solution=solution, starter=starter):
        if " ".join(line.split()) in flat:
            return f"the hint gives away a line of the solution: '{line}'"
    return ""


def _check_hints(root: Path, spec: CourseSpec, report: Validation) -> None:
    for chapter in spec.chapters:
        file = f"chapters/{chapter.number:02d}-{chapter.slug}/chapter.md"
        try:
            lines = (root / file).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            lines = []
        for exercise in chapter.exercises:
            for number, hint in enumerate(exercise.hints, start=1):
                problem = hint_problem(hint, solution=exercise.solution_code, starter=exercise.starter_code)
                if problem:
                    # The hint's first words, as folded YAML keeps them on its first line.
                    start = " ".join(hint.split()[:6])
                    line = next((n for n, text in enumerate(lines, start=1) if start in " ".join(text.split())), 0)
                    report.add(file, line, f"exercise '{exercise.slug}', hint {number}: {problem}")


def _check_probes(spec: CourseSpec, report: Validation) -> None:
    modules = {module.name: module.source for module in spec.modules}
    for chapter in spec.chapters:
        rel = f"chapters/{chapter.number:02d}-{chapter.slug}"
        for exercise in chapter.exercises:
            problems = probe_problems(exercise.probe_code, modules=modules) if exercise.probe_code else []
            for needle, problem in problems:
                report.add(f"{rel}/{exercise.slug}.probe.py", _line_in(exercise.probe_code, needle), problem)


def _line_in(code: str, needle: str) -> int:
    return next((n for n, line in enumerate(code.split("\n"), start=1) if needle in line), 1)


def _check_exercises(
    spec: CourseSpec,
    sandbox: CheckSandbox,
    report: Validation,
    *,
    timings: bool,
    owner: str,
    on_exercise: Callable[[str], None] | None,
    only: Collection[str] = (),
) -> None:
    modules = tuple((module.name, module.source) for module in spec.modules)
    for chapter in spec.chapters:
        rel = f"chapters/{chapter.number:02d}-{chapter.slug}"
        for exercise in chapter.exercises:
            if only and exercise.slug not in only:
                continue
            if on_exercise:
                on_exercise(f"{rel}/{exercise.slug}")
            # A GPU exercise runs on its CPU path here, as it does on a platform with no GPU
            # worker: it must work there too.
            exercise_check(rel, exercise, sandbox, modules, report, timings=timings, owner=owner, part=chapter.number)


def exercise_check(
    rel: str,
    exercise: ExerciseSpec,
    sandbox: CheckSandbox,
    modules: tuple,
    report: Validation,
    *,
    timings: bool,
    owner: str = "",
    part: int | None = None,
) -> tuple[CheckedRun, CheckedRun | None]:
    """Returns the starter's run and the solution's (None when there is none to run); `owner`
    lets a warm sandbox serve repeated validations; `part`: the exercise's part number, so each
    program imports the course's modules as a run of that part does (see _run)."""
    starter_file, check_file = f"{rel}/{exercise.slug}.py", f"{rel}/{exercise.slug}.check.py"
    solution_file = f"{rel}/{exercise.slug}.solution.py"
    report.exercises_run += 1
    starter = _run(sandbox, exercise, exercise.starter_code, modules, owner, part)
    if starter.status in ("error", "timed_out"):
        report.add(starter_file, 1, f"the starter code did not run to its end: {starter.status} ({starter.reason})")
    if not exercise.check_code:
        return starter, None
    check_line = _line_in(exercise.check_code, "def check(")
    if starter.passed:
        report.add(
            check_file, check_line, "the starter code passes the check: the exercise asks nothing of the learner"
        )
    if not exercise.solution_code:
        report.add(check_file, check_line, f"no solution file {solution_file}: nothing shows the check can be passed")
        return starter, None
    solution = _run(sandbox, exercise, exercise.solution_code, modules, owner, part)
    keys = key_lines(solution=exercise.solution_code, starter=exercise.starter_code)
    if not solution.passed:
        said = "; ".join(solution.failure_messages()) or "no check result"
        # At the first line the solution changes: where an author looks first.
        line = keys[0][0] if keys else 1
        report.add(solution_file, line, f"the solution does not pass its check ({solution.status}: {said})")
    for message in starter.failure_messages():
        flat = " ".join(message.split())
        for _number, line in keys:
            if " ".join(line.split()) in flat:
                report.add(
                    check_file,
                    _line_in(exercise.check_code, line),
                    f"the check's message for the starter code gives away a line of the solution: '{line}'",
                )
    for name, code in exercise.tricks:
        trick = _run(sandbox, exercise, code, modules, owner, part)
        if trick.passed:
            report.add(
                f"{rel}/{exercise.slug}.trick-{name}.py",
                1,
                "the check passes this trick program, written to pass without doing the exercise: "
                "make the check judge the work",
            )
    if timings and solution.passed:
        runs = [solution]
        # Warm: a run may still start cold (no warm sandbox ready yet), so allow a few more runs
        # until TIMING_RUNS of them were warm.
        most = TIMING_RUNS + (2 if owner else 0)
        while len(runs) < most and (sum(run.warm for run in runs) if owner else len(runs)) < TIMING_RUNS:
            runs.append(_run(sandbox, exercise, exercise.solution_code, modules, owner, part))
        report.timings.append(
            Timing(
                exercise=f"{rel}/{exercise.slug}",
                runs_ms=[run.duration_ms for run in runs],
                warm=[run.warm for run in runs],
            )
        )
    return starter, solution

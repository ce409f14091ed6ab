"""Rules of the house that no single feature test would notice breaking: modules stay small enough
to read, and no code reads a run's English `reason` (people read it; code reads `Run.limit`,
`Run.cause` and `Run.check_passed`). Both read the tracked source, not what happens to be loaded."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
# Exempt: benchmarks, migrations, and course content: a course module such as groundup.py is the
# course's text, one module the learner imports and reads part by part.
EXEMPT = re.compile(r"^(bench/|.*/migrations/|courses/content/|tests/content/fixtures/)")
# Reading the reason: a queryset filter on it, or matching its words.
READS_REASON = re.compile(
    r"reason__"  # a queryset filter on it
    r"|reason\)?\.(startswith|endswith|includes|match)\("  # its words, in Python or JavaScript
    r"|\.test\(\s*[\w.]*reason\b"  # a JavaScript regular expression tried on it
    r"|\breason\s*[!=]==?|[!=]==?\s*[\w.]*reason\b|\bin\s+[\w.]*reason\b"  # compared, or searched
)


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).exists()]


def _lines_matching(sources, pattern: re.Pattern) -> list[str]:
    """Each line of the sources that the pattern finds, as path:number: line."""
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]


def test_no_python_module_outside_the_exempt_ones_is_over_500_lines():
    sources = _tracked("*.py")
    assert len(sources) > 100, "the walk found the project's modules"
    long = [
        f"{path.relative_to(ROOT)}: {count} lines"
        for path in sources
        if not EXEMPT.match(path.relative_to(ROOT).as_posix())
        and (count := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert long == [], "\n".join(long)


def test_no_code_reads_a_runs_english_reason():
    """Only the runner writes reasons (runner/services.py, sandbox/); the migration that once
    filled the facts from old runs' reasons is history and is exempt."""
    sources = [
        path
        for path in _tracked("*.py", "frontend/src/*.js", "*.html")
        if "/migrations/" not in path.as_posix() and not path.is_relative_to(ROOT / "tests")
    ]
    reading = _lines_matching(sources, READS_REASON)
    assert reading == [], "\n".join(reading)


def test_the_reason_check_catches_each_way_of_reading_it():
    for line in (
        'Run.objects.filter(reason__startswith="memory limit")',
        "if run.reason.startswith('memory'):",
        'if reason == "stopped by learner":',
        "memory = REASON_MEMORY in run.reason",
        'if (status === "failed" && /limit/.test(reason)) return',
        "if (body.reason === STOPPED_BY_LEARNER) {",
    ):
        assert READS_REASON.search(line), line
    assert not READS_REASON.search('reason = "stopped by learner"')


# An import of one of the platform's apps other than the sandbox package, or of its settings
# package other than the plain modules of limits and environment values (no Django in them).
IMPORTS_AN_APP = re.compile(
    r"^\s*(from|import)\s+(accounts|courses|teaching|runner(?!\.sandbox\b)|ecplatform(?!(\.| import )(limits|env)\b))\b"
)


def test_the_sandbox_package_imports_nothing_of_the_platforms_apps():
    """sandbox/ runs learners' code and nothing else: backends run from plain scripts and
    the harness runs in the sandbox, so what the platform needs of them (routing a learner's next
    run, say) it registers as a callback rather than being imported."""
    sources = _tracked("sandbox/*.py")
    assert len(sources) > 5, "the walk found the sandbox package"
    importing = _lines_matching(sources, IMPORTS_AN_APP)
    assert importing == [], "\n".join(importing)
    assert IMPORTS_AN_APP.search("        from runner.routing import routing_learner_bound")
    assert IMPORTS_AN_APP.search("from ecplatform.settings import base")
    assert not IMPORTS_AN_APP.search("from sandbox.base import Limits")
    assert not IMPORTS_AN_APP.search("from ecplatform import limits as caps")


PROJECT_PACKAGES = ("accounts", "courses", "ecplatform", "frontend", "runner", "teaching")


def test_no_module_of_the_apps_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: what two modules share gets a public
    name (the tests' reference implementations may still read one)."""
    import ast

    sources = [
        path
        for path in _tracked("*.py")
        if "/migrations/" not in path.as_posix()
        and not path.is_relative_to(ROOT / "tests")
        and not path.is_relative_to(ROOT / "bench")
    ]
    private = [
        f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}"
        for path in sources
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module
        and node.module.split(".")[0] in PROJECT_PACKAGES
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert private == [], "\n".join(private)

"""The import graph points down. The floors, bottom to top:

    sandbox/            runs code in isolation; imports nothing of Django or the platform
    ecplatform (core)   settings' helpers, the API's conventions, limits, the Celery app
    accounts/           users and roles
    courses/            content, enrolment, learners' progress
    runner/             runs: the API, the tasks, routing, the event stream
    teaching/           dashboards, cohorts, counts, a learner's course record
    lti/                LTI 1.3 as a tool: launches, deep linking, scores and rosters for learning systems
    frontend/           the pages
    ecplatform (wiring) URLs, settings, the ASGI/WSGI entry points

A module may import its own floor and any floor below it, never one above, so no two apps import
each other. The walk reads every import statement of the source (not what happens to be loaded),
wherever it stands: a function, a TYPE_CHECKING block."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {
    "sandbox": ROOT / "sandbox",
    "ecplatform": ROOT / "platform" / "ecplatform",
    "accounts": ROOT / "platform" / "accounts",
    "courses": ROOT / "courses",
    "runner": ROOT / "runner",
    "teaching": ROOT / "teaching",
    "lti": ROOT / "lti",
    "frontend": ROOT / "frontend",
}
WIRING = ("ecplatform.urls", "ecplatform.api_urls", "ecplatform.settings", "ecplatform.asgi", "ecplatform.wsgi")
FLOORS = ["sandbox", "ecplatform", "accounts", "courses", "runner", "teaching", "lti", "frontend", "wiring"]


def floor_of(module: str) -> int | None:
    """The floor a dotted module name stands on; None for the standard library and third parties."""
    if any(module == wired or module.startswith(f"{wired}.") for wired in WIRING):
        return FLOORS.index("wiring")
    top = module.split(".")[0]
    return FLOORS.index(top) if top in SOURCES else None


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an import statement names: `from runner import selectors` names
    runner.selectors (a submodule or a name of runner: the floor is the same)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def module_name(app: str, path: Path) -> str:
    parts = path.relative_to(SOURCES[app]).with_suffix("").parts
    return ".".join((app, *[part for part in parts if part != "__init__"]))


def sources() -> list[tuple[str, Path]]:
    return [
        (app, path)
        for app, root in SOURCES.items()
        for path in sorted(root.rglob("*.py"))
        if not {"migrations", "node_modules", "__pycache__"} & set(path.relative_to(root).parts)
    ]


def upward_imports(found: list[tuple[str, Path]]) -> list[str]:
    wrong = []
    for app, path in found:
        here = floor_of(module_name(app, path))
        for line, module in imported_modules(ast.parse(path.read_text(), filename=str(path))):
            there = floor_of(module)
            if there is not None and there > here:
                wrong.append(
                    f"{app}/{path.relative_to(SOURCES[app]).as_posix()}:{line}: {FLOORS[here]} imports {module} ({FLOORS[there]})"
                )
    return wrong


def test_every_import_points_down():
    found = sources()
    assert {app for app, _ in found} == set(SOURCES), "the walk found every app"
    assert len(found) > 200
    wrong = upward_imports(found)
    assert wrong == [], "\n".join(wrong)


def test_the_walk_sees_each_way_of_importing_upwards(tmp_path, monkeypatch):
    source = """
import runner.models
from teaching import selectors
from ecplatform.urls import urlpatterns
import json
from django.db import models
def later():
    from frontend.status import banner
"""
    courses = tmp_path / "courses"
    courses.mkdir()
    (courses / "example.py").write_text(source)
    monkeypatch.setitem(SOURCES, "courses", courses)
    wrong = upward_imports([("courses", courses / "example.py")])
    assert [line.split(": ", 1)[1] for line in wrong] == [
        "courses imports runner.models (runner)",
        "courses imports teaching.selectors (teaching)",
        "courses imports ecplatform.urls.urlpatterns (wiring)",
        "courses imports frontend.status.banner (frontend)",
    ]


def test_the_sandbox_package_loads_without_django_or_the_platform():
    """Loaded in a fresh interpreter, every module of sandbox/ leaves Django, the Celery app and
    the platform's packages unimported: the worker gives it its settings as a hook."""
    # All but a __main__, which would run the harness's supervisor.
    modules = [module_name("sandbox", path) for app, path in sources() if app == "sandbox" and path.stem != "__main__"]
    assert "sandbox.harness" in modules or any(m.startswith("sandbox.harness.") for m in modules)
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "roots = {'django', 'celery', 'rest_framework', *" + repr(sorted(set(SOURCES) - {"sandbox"})) + "}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in roots))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

"""courses/ sits below runner/ and teaching/ and beside accounts/: it may read runner and accounts
only through their public modules, never their models, services or sandbox, and teaching not at all. The test reads every import statement of
courses/ (the source, not what happens to be loaded), so an arrow back up the layers fails here."""

import ast
from pathlib import Path

COURSES = Path(__file__).resolve().parents[2] / "courses"
GUARDED = ("runner", "accounts", "teaching")
# What runner and accounts offer other apps: reads, and running code against a check. Nothing of
# teaching/, which sits above courses/ (it reads courses and runs to make the dashboards).
PUBLIC = {"runner.selectors", "runner.checking", "accounts.selectors"}


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module an import statement names, wherever it stands (a function, a TYPE_CHECKING
    block): `from runner import sandbox` names runner.sandbox."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in GUARDED:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def _forbidden(module: str) -> bool:
    guarded = module.split(".")[0] in GUARDED
    return guarded and not any(module == public or module.startswith(f"{public}.") for public in PUBLIC)


def _courses_sources() -> list[Path]:
    return [path for path in sorted(COURSES.rglob("*.py")) if "migrations" not in path.relative_to(COURSES).parts]


def test_courses_imports_only_the_public_modules_of_runner_and_accounts():
    sources = _courses_sources()
    assert len(sources) > 30, "the walk found the courses app"
    wrong = [
        f"courses/{path.relative_to(COURSES).as_posix()}:{line}: imports {module}"
        for path in sources
        for line, module in _imported_modules(ast.parse(path.read_text(), filename=str(path)))
        if _forbidden(module)
    ]
    assert wrong == [], "\n".join(wrong)


def test_the_walk_catches_each_way_of_importing_an_internal():
    source = """
import runner.models
from runner.sandbox.base import Limits
from runner import services, selectors
from accounts.models import User
def later():
    from runner.checking import check_sandbox
    import accounts.services
"""
    found = [module for _, module in _imported_modules(ast.parse(source)) if _forbidden(module)]
    assert found == ["runner.models", "runner.sandbox.base", "runner.services", "accounts.models", "accounts.services"]


ACCOUNTS = COURSES.parent / "platform" / "accounts"
APPS = ("courses", "runner", "teaching", "frontend")


def test_accounts_imports_no_app():
    """accounts/ is the floor the apps stand on: sign-up with a cohort's invite is teaching's."""
    sources = [path for path in sorted(ACCOUNTS.rglob("*.py")) if "migrations" not in path.parts]
    assert len(sources) > 5, "the walk found the accounts app"
    wrong = [
        f"accounts/{path.relative_to(ACCOUNTS).as_posix()}:{line}: imports {module}"
        for path in sources
        for line, module in _imported_modules(ast.parse(path.read_text(), filename=str(path)))
        if module.split(".")[0] in APPS
    ]
    assert wrong == [], "\n".join(wrong)

"""Run demo-course code the way the platform does, and print what happened as JSON.

    python exercise_harness.py exercise FOLDER SLUG   starter + check, then solution + check
    python exercise_harness.py listings FILE...       every ```python listing in the chapters

The course's lib/ modules are importable by name (the sandbox installs them the same way).

Learner code runs in a fresh dict namespace as __main__; the check file runs in its own namespace
and its check(ns) receives the learner's globals. Run in a subprocess so torch and each exercise's
globals never leak into the test process or into each other.
"""

import contextlib
import io
import json
import re
import sys
import traceback
from pathlib import Path

LISTING_RE = re.compile(r"^```python\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def run_code(code: str, filename: str) -> tuple[dict, str, str | None]:
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, filename, "exec"), ns)
        except Exception:
            error = traceback.format_exc()
    return ns, out.getvalue(), error


def run_check(check_code: str, filename: str, ns: dict) -> dict:
    check_ns = {"__name__": "exercise_check"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(check_code, filename, "exec"), check_ns)
            passed, message = check_ns["check"](ns)
        except Exception:
            return {"error": traceback.format_exc(), "printed": out.getvalue()}
    return {"passed": passed, "message": message, "printed": out.getvalue(), "error": None}


def run_exercise(folder: Path, slug: str) -> dict:
    check_file = folder / f"{slug}.check.py"
    check_code = check_file.read_text()
    result = {}
    for part, path in (("starter", folder / f"{slug}.py"), ("solution", folder / f"{slug}.solution.py")):
        ns, stdout, error = run_code(path.read_text(), str(path))
        result[part] = {"stdout": stdout, "error": error, "check": run_check(check_code, str(check_file), ns)}
        if part == "starter":
            # A learner may delete a name or give it another type: the check must answer in words.
            user_names = [name for name in ns if not name.startswith("__")]
            result["empty"] = run_check(check_code, str(check_file), {"__name__": "__main__"})
            result["nonsense"] = run_check(check_code, str(check_file), dict.fromkeys(user_names, "nonsense"))
    return result


def run_listings(paths: list[str]) -> dict:
    result = {}
    for path in paths:
        for index, match in enumerate(LISTING_RE.finditer(Path(path).read_text()), start=1):
            _, stdout, error = run_code(match.group("code"), f"{path}:listing{index}")
            result[f"{path}:listing{index}"] = {"stdout": stdout, "error": error}
    return result


def course_modules_importable(folder: Path) -> None:
    """The course's lib/ modules importable by name, as the sandbox installs them."""
    for parent in folder.resolve().parents:
        if (parent / "course.yaml").is_file():
            if (parent / "lib").is_dir():
                sys.path.insert(0, str(parent / "lib"))
            return


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    course_modules_importable(Path(args[0]))
    report = run_exercise(Path(args[0]), args[1]) if mode == "exercise" else run_listings(args)
    print(json.dumps(report))

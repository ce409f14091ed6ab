"""Run demo-course code the way the platform does, and print what happened as JSON.

    python exercise_harness.py exercise FOLDER SLUG   starter + check, then solution + check
    python exercise_harness.py listings FILE...       every ```python listing in the chapters

The course's lib/ modules are importable by name (the sandbox installs them the same way).

Learner code runs in a fresh dict namespace as __main__; the check file runs in its own namespace
and its check(ns) receives the learner's globals. Run in a subprocess so torch and each exercise's
globals never leak into the test process or into each other.

An exercise with a probe (<slug>.probe.py) has its functions called on fresh inputs as the sandbox
calls them, with the sandbox's own code (sandbox/harness/probe.py) in a forked process, so the
library functions it refuses stay refused there only; its check gets check(ns, probed).
"""

import contextlib
import io
import json
import os
import re
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, for the sandbox's probe

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


def run_check(check_code: str, filename: str, ns: dict, probed: list | None = None) -> dict:
    check_ns = {"__name__": "exercise_check"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(check_code, filename, "exec"), check_ns)
            passed, message = check_ns["check"](ns) if probed is None else check_ns["check"](ns, probed)
        except Exception:
            return {"error": traceback.format_exc(), "printed": out.getvalue()}
    return {"passed": passed, "message": message, "printed": out.getvalue(), "error": None}


def run_probe(code: str, source: str) -> list:
    """The probe's calls of the learner's functions, as the check gets them: made in a forked
    process (the refusals it installs die with it), read back as data."""
    from sandbox.harness.check import probe_read
    from sandbox.harness.probe import probe_seed
    from sandbox.harness.probe import run_probe as probe_run

    seed = probe_seed()
    results_r, results_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(results_r)
        with contextlib.suppress(BaseException), os.fdopen(results_w, "wb") as results:
            results.write(probe_run(code, source, seed))
        os._exit(0)
    os.close(results_w)
    with os.fdopen(results_r, "rb") as results:
        data = results.read()
    os.waitpid(pid, 0)
    return probe_read({"source": source, "seed": seed, "ok": True}, data)


def run_exercise(folder: Path, slug: str) -> dict:
    check_file = folder / f"{slug}.check.py"
    check_code = check_file.read_text()
    probe_file = folder / f"{slug}.probe.py"
    probe = probe_file.read_text() if probe_file.is_file() else None
    parts = {"starter": folder / f"{slug}.py", "solution": folder / f"{slug}.solution.py"}
    # The probes fork before this process runs any learner code or torch work: a fork after torch
    # has started its worker threads may hang.
    probes = {part: run_probe(path.read_text(), probe) if probe is not None else None for part, path in parts.items()}
    result = {}
    for part, path in parts.items():
        ns, stdout, error = run_code(path.read_text(), str(path))
        probed = probes[part] if error is None else None
        result[part] = {"stdout": stdout, "error": error, "check": run_check(check_code, str(check_file), ns, probed)}
        if part == "starter":
            # A learner may delete a name or give it another type: the check must answer in words.
            user_names = [name for name in ns if not name.startswith("__")]
            result["empty"] = run_check(check_code, str(check_file), {"__name__": "__main__"}, probed)
            result["nonsense"] = run_check(check_code, str(check_file), dict.fromkeys(user_names, "nonsense"), probed)
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

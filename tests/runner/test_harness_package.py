"""The harness is a package of modules that the sandbox runs by its folder (`python -I -B
<folder>`): it must load that way, with the standard library alone."""

import ast
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "sandbox" / "harness"
# Imported by the supervisor when the runtime has them (warm, or a run with a check), never needed.
RUNTIME = {"torch", "numpy", "matplotlib"}


def test_the_harness_imports_the_standard_library_and_itself_only():
    found = set()
    for path in HARNESS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    assert found - set(sys.stdlib_module_names) - RUNTIME == set()


def test_the_folder_runs_isolated_and_the_supervisor_answers():
    """Outside a sandbox the supervisor refuses (it is not PID 1): that it says so shows the
    package loaded from its folder under -I, which ignores the environment and the current folder."""
    done = subprocess.run(
        [sys.executable, "-I", "-B", str(HARNESS)], input=b"", capture_output=True, timeout=60, cwd="/"
    )
    assert done.returncode == 2, done.stderr
    assert b"the supervisor must be the sandbox's PID 1" in done.stderr

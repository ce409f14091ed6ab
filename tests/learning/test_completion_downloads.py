"""The learner's code to take home: the notebook and the package from the completion page, downloaded
and run with the project's Python in a folder of their own, outside the platform (no Django, no
sandbox): the learner's printed output must appear, starter code must say it is starter code, and
one broken exercise must not stop the others."""

import io
import json
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from django.urls import reverse

from courses.models import Exercise
from tests.learning.browser_support import demo_course
from tests.learning.completion_support import (
    course_with_module,
    learner_code,
    python_outside,
    record_build,
    run_add,
)

pytestmark = pytest.mark.django_db

MARKER = "learner one printed this at home"
# Runs a notebook's code cells in order in one namespace, as a kernel does, with plain Python
# (Jupyter is not installed): a cell that raises prints its traceback and the next cell still runs.
CELL_RUNNER = """\
import json, sys, traceback
cells = [c for c in json.load(open(sys.argv[1], encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
namespace = {"__name__": "__main__"}
failed = 0
for number, cell in enumerate(cells, start=1):
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    print(f"--- cell {number}", flush=True)
    try:
        exec(compile(source, f"<cell {number}>", "exec"), namespace)
    except Exception:
        failed += 1
        traceback.print_exc()
    sys.stdout.flush()
sys.exit(1 if failed else 0)
"""


def _download(client, name: str, course) -> tuple[str, bytes]:
    response = client.get(reverse(f"frontend:{name}", args=[course.slug]))
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment; filename=")
    return disposition.split('"')[1], response.content


def _unpack(content: bytes, folder: Path) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        archive.extractall(folder)
        return sorted(archive.namelist())


def _run_notebook(content: bytes, folder: Path) -> subprocess.CompletedProcess:
    (folder / "code.ipynb").write_bytes(content)
    (folder / "run_cells.py").write_text(CELL_RUNNER)
    return python_outside(["run_cells.py", "code.ipynb"], cwd=folder)


@pytest.fixture
def course_and_learner(client, learner):
    course = course_with_module()
    record_build(user=learner, course=course, marker=MARKER)
    client.force_login(learner)
    return course


def test_the_package_runs_the_learners_code_outside_the_platform(client, course_and_learner, tmp_path):
    course = course_and_learner
    filename, content = _download(client, "code_package", course)

    assert filename == "transformers.zip"
    assert _unpack(content, tmp_path) == [
        "transformers/README.md",
        "transformers/__init__.py",
        "transformers/__main__.py",
        "transformers/groundup.py",
        "transformers/part_02.py",
        "transformers/part_04.py",
    ]
    part_2 = (tmp_path / "transformers" / "part_02.py").read_text()
    assert "def one_query_three_keys():" in part_2
    assert f'    print("{MARKER}")' in part_2  # the learner's own lines, as written
    assert "an earlier try" not in part_2  # the last run's code, not an earlier one
    part_4 = (tmp_path / "transformers" / "part_04.py").read_text()
    assert "Starter code: you never ran this exercise" in part_4
    readme = (tmp_path / "transformers" / "README.md").read_text()
    assert "python -m transformers.part_02" in readme
    assert "A feed-forward pass: Starter code" in readme

    one_part = python_outside(["-m", "transformers.part_02"], cwd=tmp_path)
    assert MARKER in one_part.stdout
    assert "hidden keys: 3" in one_part.stdout
    # The second exercise's last run raised: so does it here, after the first one ran.
    assert "ValueError: not done yet" in one_part.stderr
    assert one_part.returncode == 1

    every_part = python_outside(["-m", "transformers"], cwd=tmp_path)
    assert MARKER in every_part.stdout
    assert "=== Part 4, exercise 1: A feed-forward pass" in every_part.stdout
    assert "starter width: 4" in every_part.stdout  # the starter, which the learner never ran

    from_python = python_outside(
        ["-c", "from transformers.part_02 import one_query_three_keys as f; f()"], cwd=tmp_path
    )
    assert from_python.returncode == 0, from_python.stderr
    assert MARKER in from_python.stdout


def test_the_notebook_runs_the_learners_code_outside_the_platform(client, course_and_learner, tmp_path):
    course = course_and_learner
    filename, content = _download(client, "code_notebook", course)

    assert filename == "transformers.ipynb"
    notebook = nbformat.reads(content.decode(), as_version=4)
    nbformat.validate(notebook)
    kinds = [cell.cell_type for cell in notebook.cells]
    # The title, the modules cell; per part a markdown cell, and per exercise one of each.
    part_2 = ["markdown", "markdown", "code", "markdown", "code"]
    part_4 = ["markdown", "markdown", "code"]
    assert kinds == ["markdown", "code", *part_2, *part_4]
    assert "COURSE_MODULES" in notebook.cells[1].source
    assert notebook.cells[2].source.startswith("## Part 2: Attention by hand")
    assert "Quiz: 4 of 5 right at the first try." in notebook.cells[2].source
    assert notebook.cells[3].source.startswith("### Exercise 1: One query, three keys")
    assert "**Your code from your last run" in notebook.cells[3].source
    assert "Change the query so it points" in notebook.cells[3].source  # glossary brackets dropped
    assert notebook.cells[4].source == learner_code(MARKER).rstrip("\n")
    # The last run's output comes along, as the learner saw it.
    assert notebook.cells[4].outputs[0]["text"] == f"hidden keys: 3\n{MARKER}\n"
    assert "**Starter code: you never ran this exercise" in notebook.cells[8].source

    ran = _run_notebook(content, tmp_path)
    assert (tmp_path / "groundup.py").read_text() == course.modules.get(name="groundup").source
    assert MARKER in ran.stdout
    assert "hidden keys: 3" in ran.stdout
    assert "ValueError: not done yet" in ran.stderr
    assert "starter width: 4" in ran.stdout


def test_code_that_means_something_else_in_a_function_runs_as_on_the_platform(client, learner, tmp_path):
    """Each exercise becomes a function of its part's module where that changes nothing; a script
    that uses `global`, reuses a built-in's name or does not compile runs as a script instead."""
    course = course_with_module()
    part_4 = course.chapters.get(number=4)
    programs = {
        "uses-global": (
            "count = 0\n\ndef bump():\n    global count\n    count += 1\n\nbump()\nbump()\nprint('count is', count)\n"
        ),
        "reuses-a-builtin": "print('largest', max([1, 7]))\nmax = 3\nprint('max is now', max)\n",
        "multi-line-string": 'text = """first\n    second\nthird"""\nprint(repr(text))\n',
        "does-not-compile": "print('never'\n",
        "prints-after-the-broken-one": "print('still runs')\n",
    }
    for position, (slug, code) in enumerate(programs.items(), start=2):
        item = Exercise.objects.create(chapter=part_4, slug=slug, position=position, title=slug.replace("-", " "))
        run_add(user=learner, exercise=item, code=code)
    client.force_login(learner)
    _, content = _download(client, "code_package", course)
    _unpack(content, tmp_path)
    source = (tmp_path / "transformers" / "part_04.py").read_text()
    assert "def multi_line_string():" in source and "_MULTI_LINE_STRING_CODE" not in source
    for slug in ("uses-global", "reuses-a-builtin", "does-not-compile"):
        assert f"_{slug.replace('-', '_').upper()}_CODE = " in source

    ran = python_outside(["-m", "transformers.part_04"], cwd=tmp_path)
    assert "count is 2" in ran.stdout
    assert "largest 7\nmax is now 3" in ran.stdout
    assert "'first\\n    second\\nthird'" in ran.stdout
    assert "SyntaxError" in ran.stderr and "part_04/does-not-compile" in ran.stderr
    assert "still runs" in ran.stdout
    assert ran.returncode == 1


def test_the_demo_course_solutions_run_from_the_notebook(client, learner, tmp_path):
    """Every published exercise of the course itself, its solution as the learner's last run: the
    notebook runs them all with the course's real module, without one error. (The package does
    the same in the browser walk, tests/learning/test_browser_course_walk.py, downloaded from the
    completion page after a learner has passed every exercise: each download is run once.)"""
    course = demo_course()
    exercises = list(Exercise.objects.filter(chapter__course=course, chapter__published=True))
    assert exercises
    for item in exercises:
        run_add(user=learner, exercise=item, code=item.solution_code, passed=True)
    client.force_login(learner)

    _, content = _download(client, "code_notebook", course)
    (tmp_path / "notebook").mkdir()
    ran = _run_notebook(content, tmp_path / "notebook")
    assert ran.returncode == 0, ran.stderr[-3000:]
    cells = json.loads(content)["cells"]
    assert sum(cell["cell_type"] == "code" for cell in cells) == len(exercises) + 1


def test_the_notebook_shows_the_last_runs_figures_and_error_as_jupyter_would(client, learner):
    course = course_with_module()
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    run_add(
        user=learner,
        exercise=course.chapters.get(number=4).exercises.get(),
        code="print('drawing')\nraise KeyError('width')\n",
        outputs=[
            {"type": "stream", "name": "stdout", "text": "drawing\n"},
            {"type": "display", "data": {"image/png": png, "text/plain": "<Figure size 500x300 with 1 Axes>"}},
            {
                "type": "error",
                "ename": "KeyError",
                "evalue": "'width'",
                "traceback": ["Traceback", "KeyError: 'width'"],
            },
            {"type": "check", "passed": False, "message": "Not yet."},
        ],
    )
    client.force_login(learner)
    _, content = _download(client, "code_notebook", course)

    notebook = nbformat.reads(content.decode(), as_version=4)
    nbformat.validate(notebook)
    outputs = notebook.cells[-1].outputs
    assert [output.output_type for output in outputs] == ["stream", "display_data", "error"]
    assert outputs[1].data["image/png"] == png
    assert outputs[2].ename == "KeyError"
    assert "Not passed yet." in notebook.cells[-2].source

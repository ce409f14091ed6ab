"""A learner's code as a Jupyter notebook (nbformat 4): one markdown cell per part and per exercise,
one code cell per exercise with the output of the learner's last run, and first a code cell that
writes the course's modules next to the notebook, so it runs anywhere with the course's packages."""

from datetime import datetime

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from courses.completion import CourseRecord, ExerciseRecord
from courses.learner_code.marks import exercise_mark, intro, part_mark, pieces_line, runtime_requirements
from courses.learner_code.package import package_name
from courses.learner_code.source import markdown_plain, python_literal

MODULES_CELL = """\
# The course's own modules, written next to this notebook so the exercises can import them by
# name, as they did on the platform. Run this cell first.
import importlib
import sys
from pathlib import Path

COURSE_MODULES = {{{modules}}}

for _name, _source in COURSE_MODULES.items():
    Path(f"{{_name}}.py").write_text(_source, encoding="utf-8")
    sys.modules.pop(_name, None)  # run again, the cell imports the files afresh
if str(Path.cwd()) not in sys.path:
    sys.path.insert(0, str(Path.cwd()))
importlib.invalidate_caches()
print("Course modules written:", ", ".join(f"{{name}}.py" for name in COURSE_MODULES) or "none")
"""


def _outputs(record: ExerciseRecord) -> list:
    """The last run's output as the notebook's own: streams, figures and the error, if any."""
    run = record.last_run
    if run is None or not run.is_finished:
        return []
    outputs = []
    for event in run.outputs:
        kind = event.get("type")
        if kind == "stream" and event.get("name") in ("stdout", "stderr"):
            outputs.append(new_output("stream", name=event["name"], text=event.get("text", "")))
        elif kind == "display" and isinstance(event.get("data"), dict):
            data = {key: value for key, value in event["data"].items() if key in ("image/png", "text/plain")}
            if data:
                outputs.append(new_output("display_data", data=data))
        elif kind == "error":
            outputs.append(
                new_output(
                    "error",
                    ename=str(event.get("ename", "")),
                    evalue=str(event.get("evalue", "")),
                    traceback=[str(line) for line in event.get("traceback") or []],
                )
            )
    return outputs


def notebook_build(record: CourseRecord, *, learner: str, exported_at: datetime) -> tuple[str, str]:
    """(file name, JSON text) of the learner's code as a notebook. `record` is loaded with_code."""
    modules = "".join(f"\n    {name!r}: {python_literal(source)},\n" for name, source in record.modules)
    cells = [
        new_markdown_cell(
            f"# {record.course.title}\n\n{intro(record, learner=learner, exported_at=exported_at)}\n\n"
            "The code cell below writes the course's own modules next to this notebook; run it first. "
            f"The code needs Python 3.11 or later with `{runtime_requirements()}`."
        ),
        new_code_cell(MODULES_CELL.format(modules=modules)),
    ]
    for part in record.open_parts:
        text = f"## Part {part.chapter.number}: {part.chapter.title}\n\n{part_mark(part)}"
        if part.pieces:
            text += f"\n\n{pieces_line(part)}"
        if not part.exercises:
            text += "\n\nThis part has no exercises."
        cells.append(new_markdown_cell(text))
        for exercise in part.exercises:
            mark = exercise_mark(exercise)
            text = f"### Exercise {exercise.number}: {exercise.exercise.title}\n\n**{mark}**"
            if exercise.exercise.instructions:
                text += f"\n\n{markdown_plain(exercise.exercise.instructions)}"
            cells.append(new_markdown_cell(text))
            cells.append(new_code_cell(exercise.code.rstrip("\n"), outputs=_outputs(exercise)))
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "easycompilers": {"course": record.course.slug, "learner": learner},
        },
    )
    nbformat.validate(notebook)
    return f"{package_name(record)}.ipynb", nbformat.writes(notebook) + "\n"

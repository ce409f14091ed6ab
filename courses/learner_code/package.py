"""A learner's code as a Python package in a zip: `<package>/` with one module per part (each
exercise a function), the course's modules and a README. It runs with a plain Python that has the
course's packages: `python -m <package>` runs every part, `python -m <package>.part_02` one."""

import io
import zipfile
from datetime import datetime

from courses.completion import CourseRecord, ExerciseRecord, PartRecord
from courses.learner_code.marks import exercise_mark, intro, part_mark, pieces_line, runtime_requirements, when
from courses.learner_code.source import function_body_problem, function_source, identifier, python_literal

INIT = '''\
"""{title}: {learner}'s code, exported from EasyCompilers on {exported}.

See README.md for what is here and how to run it.
"""

import linecache
import os
import sys
import traceback

# The exercises import the course's modules by name (`import {example}`), as they did on the
# platform: this folder goes first on the import path.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def run_script(source, name):
    """Run an exercise's code as a module of its own, as the platform ran it."""
    filename = f"<{{name}}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), {{"__name__": "__main__", "__builtins__": __builtins__}})


def run_exercises(exercises):
    """Call each exercise in turn; one that fails prints its traceback and the next one still
    runs. Returns 1 if any failed, else 0 (an exit status)."""
    failed = 0
    for exercise in exercises:
        print(f"\\n=== {{exercise.__doc__.strip().splitlines()[0]}}", flush=True)
        try:
            exercise()
        except Exception:
            failed += 1
            traceback.print_exc()
        sys.stdout.flush()
    return 1 if failed else 0
'''

MAIN = '''\
"""Every part's exercises, in order: python -m {package}"""

import sys

from {package} import {parts}run_exercises

failed = 0
for part in [{modules}]:
    failed |= run_exercises(part.EXERCISES)
sys.exit(failed)
'''


def package_name(record: CourseRecord) -> str:
    """The package's name, from the course's slug, clear of the course's own module names."""
    name = identifier(record.course.slug, prefix="course")
    taken = {module for module, _ in record.modules}
    while name in taken:
        name += "_code"
    return name


def part_module_name(part: PartRecord) -> str:
    return f"part_{part.chapter.number:02d}"


def function_names(*, part: PartRecord, package: str) -> list[str]:
    """One function name per exercise of the part, none of them the package's own name."""
    names: list[str] = []
    for record in part.exercises:
        name = identifier(record.exercise.slug, prefix="exercise")
        while name in names or name == package:
            name += "_"
        names.append(name)
    return names


def _exercise_source(*, part: PartRecord, record: ExerciseRecord, name: str, package: str) -> str:
    title = f"Part {part.chapter.number}, exercise {record.number}: {record.exercise.title}"
    docstring = f"{title}\n\n{exercise_mark(record)}"
    source = function_source(name=name, docstring=docstring, code=record.code)
    if source is not None:
        return source
    # As a script, in a string: it means the same as on the platform whatever it does.
    constant = f"_{name.upper()}_CODE"
    why = function_body_problem(record.code) or "its text would change inside a function"
    doc = python_literal(f"{docstring}\n\nIt runs as a script of its own, as on the platform: {why}.\n")
    label = f"{part_module_name(part)}/{record.exercise.slug}"
    return (
        f"{constant} = {python_literal(record.code)}\n\n\n"
        f"def {name}():\n    {doc}\n    {package}.run_script({constant}, {label!r})\n"
    )


def part_module(*, part: PartRecord, package: str) -> str:
    lines = [f"Part {part.chapter.number}: {part.chapter.title}.", "", part_mark(part)]
    if part.pieces:
        lines += ["", pieces_line(part).replace("`", "")]
    lines += ["", f"Run every exercise of this part: python -m {package}.{part_module_name(part)}", ""]
    for record in part.exercises:
        lines.append(f"Exercise {record.number}, {record.exercise.title}: {exercise_mark(record)}")
    names = function_names(part=part, package=package)
    functions = [
        _exercise_source(part=part, record=record, name=name, package=package)
        for record, name in zip(part.exercises, names, strict=True)
    ]
    return (
        f"{python_literal(chr(10).join(lines) + chr(10))}\n\nimport {package}\n\n\n"
        + "\n\n".join(functions)
        + f"\n\nEXERCISES = [{', '.join(names)}]\n\n"
        + f'if __name__ == "__main__":\n    raise SystemExit({package}.run_exercises(EXERCISES))\n'
    )


def readme(record: CourseRecord, *, package: str, learner: str, exported_at: datetime) -> str:
    parts = [part for part in record.open_parts if part.exercises]
    first = part_module_name(parts[0]) if parts else "part_01"
    lines = [
        f"# {record.course.title}: your code",
        "",
        intro(record, learner=learner, exported_at=exported_at),
        "",
        "## Run it",
        "",
        "From the folder that holds this one, with Python 3.11 or later:",
        "",
        "```sh",
        f"python -m pip install {runtime_requirements()}",
        f"python -m {package}            # every part's exercises, in order",
        f"python -m {package}.{first}    # one part",
        "```",
        "",
        f"Or from Python: `from {package}.{first} import EXERCISES`, then call any of them.",
        "Figures open in a window of their own; `MPLBACKEND=Agg` in the environment skips them.",
        "",
        "## What is here",
        "",
        "| file | what |",
        "|---|---|",
        "| `__init__.py` | puts this folder on the import path, so the exercises find the course's modules |",
        "| `__main__.py` | runs every part |",
    ]
    for part in parts:
        what = f"Part {part.chapter.number}, {part.chapter.title}: {part_mark(part)}"
        lines.append(f"| `{part_module_name(part)}.py` | {what} |")
    for name, _ in record.modules:
        lines.append(f"| `{name}.py` | the course's own module, as the exercises imported it on the platform |")
    lines += ["", "## Your exercises", ""]
    for part in parts:
        for exercise in part.exercises:
            lines.append(
                f"- Part {part.chapter.number}, exercise {exercise.number}, {exercise.exercise.title}: "
                f"{exercise_mark(exercise)}"
            )
    lines += ["", f"Exported {when(exported_at)}."]
    return "\n".join(lines) + "\n"


def package_build(record: CourseRecord, *, learner: str, exported_at: datetime) -> tuple[str, bytes]:
    """(file name, zip bytes) of the learner's code as a package. `record` is loaded with_code."""
    package = package_name(record)
    parts = [part for part in record.open_parts if part.exercises]
    files = {
        "__init__.py": INIT.format(
            title=record.course.title,
            learner=learner,
            exported=when(exported_at),
            example=record.modules[0][0] if record.modules else "a_course_module",
        ),
        "__main__.py": MAIN.format(
            package=package,
            parts="".join(f"{part_module_name(part)}, " for part in parts),
            modules=", ".join(part_module_name(part) for part in parts),
        ),
        "README.md": readme(record, package=package, learner=learner, exported_at=exported_at),
    }
    for name, source in record.modules:
        files[f"{name}.py"] = source
    for part in parts:
        files[f"{part_module_name(part)}.py"] = part_module(part=part, package=package)
    buffer = io.BytesIO()
    stamp = exported_at.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(f"{package}/{name}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, text.encode())
    return f"{package}.zip", buffer.getvalue()

"""Courses as files: import a course folder into the database and export it back.

The format is described in courses/content/FORMAT.md. An import reads and checks every file
first (`course_read`, reader.py), so a broken file stops it before anything is written; then it
writes in one transaction (`course_import`, importer.py), creating, updating and removing rows so
the database matches the folder. `course_export` (writer.py) writes the rows back as files. The
format's rules that are not about one file's syntax live in rules.py; the files as text (YAML with
lines, front matter) in source.py; what a folder says, as data, in specs.py.
"""

from courses.services.content_io.importer import ImportReport, course_import
from courses.services.content_io.reader import course_read
from courses.services.content_io.specs import (
    ChapterSpec,
    ChoiceSpec,
    ContentError,
    CourseSpec,
    ExerciseSpec,
    ModuleSpec,
    QuestionSpec,
    TermSpec,
)
from courses.services.content_io.writer import course_export

__all__ = [
    "ChapterSpec",
    "ChoiceSpec",
    "ContentError",
    "CourseSpec",
    "ExerciseSpec",
    "ImportReport",
    "ModuleSpec",
    "QuestionSpec",
    "TermSpec",
    "course_export",
    "course_import",
    "course_read",
]

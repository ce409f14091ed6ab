"""Courses in and out of the admin as zip files of the course folder format (FORMAT.md).

Export writes the folder with the exporter (`course_export`) and zips it. Import is two steps:
a dry run that checks every file (the validator's text checks, the importer's own) and runs the
import inside a transaction that is rolled back, so it reports exactly what would be created,
updated and removed; then the same import applied, all or nothing, under the publish rule: the
exercises of every chapter it publishes are validated in the sandbox (courses/services/authoring.py,
as the admin's chapter form does), and one that fails refuses the whole import.
"""

import io
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import reversion
from django.db import transaction

from courses.models import Course
from courses.services.authoring import PublishRefusedError, course_import_published
from courses.services.content_io import ContentError, course_export, course_import
from courses.services.validation import course_validate

# A course folder is text: these caps stop a zip bomb long before they stop a course.
MAX_FILES = 2000
MAX_BYTES = 50 * 1024**2


@dataclass
class ZipPlan:
    """What importing a zip would do: problems (file:line: problem) refuse it."""

    slug: str = ""
    problems: list[str] = field(default_factory=list)
    created: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    removed: Counter = field(default_factory=Counter)
    summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def rows(self) -> list[tuple[str, int, int, int]]:
        """(kind, created, updated, removed) for each kind of row the import touches."""
        kinds = ["course", "chapter", "exercise", "question", "choice", "glossary term", "module"]
        return [
            (kind, self.created[kind], self.updated[kind], self.removed[kind])
            for kind in kinds
            if self.created[kind] or self.updated[kind] or self.removed[kind]
        ]


class _RollBack(Exception):
    pass


def course_zip_export(*, course: Course) -> bytes:
    """The course folder, zipped under a folder named after the course's slug."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / course.slug
        course_export(course=course, path=root)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(p for p in root.rglob("*") if p.is_file()):
                archive.write(file, str(PurePosixPath(course.slug) / file.relative_to(root).as_posix()))
        return buffer.getvalue()


def _unpack(data: bytes, target: Path) -> Path:
    """Extract safely and return the course folder: the zip's root, or its single top folder."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ContentError("(upload)", None, "not a zip file") from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > MAX_FILES or sum(m.file_size for m in members) > MAX_BYTES:
            raise ContentError("(upload)", None, f"too large: at most {MAX_FILES} files and {MAX_BYTES // 2**20} MiB")
        for member in members:
            name = PurePosixPath(member.filename)
            if name.is_absolute() or ".." in name.parts or member.external_attr >> 28 == 0o12:
                raise ContentError(member.filename, None, "a path outside the course folder (or a link) in the zip")
            if name.parts and name.parts[0] in ("__MACOSX",):
                continue
            path = target.joinpath(*name.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(member))
    if (target / "course.yaml").exists():
        return target
    folders = [p for p in target.iterdir() if p.is_dir() and p.name != "__MACOSX"]
    if len(folders) == 1 and (folders[0] / "course.yaml").exists():
        return folders[0]
    raise ContentError("course.yaml", None, "no course.yaml at the top of the zip or in its one folder")


def _prefix(root: Path, base: Path) -> str:
    rel = root.relative_to(base).as_posix()
    return "" if rel == "." else rel


def course_zip_plan(*, data: bytes) -> ZipPlan:
    """The dry run: every problem with its file and line, or what the import would change."""
    plan = ZipPlan()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            root = _unpack(data, Path(tmp))
        except ContentError as error:
            plan.problems.append(str(error))
            return plan
        prefix = _prefix(root, Path(tmp))
        checked = course_validate(path=root, backend=None)
        plan.problems += [problem.text(prefix) for problem in checked.problems]
        if plan.problems:
            return plan
        try:
            with transaction.atomic():
                report = course_import(path=root)
                plan.slug = report.course.slug
                plan.created, plan.updated, plan.removed = report.created, report.updated, report.removed
                plan.summary = report.summary().replace("Imported", "Would import", 1)
                raise _RollBack
        except _RollBack:
            pass
        except ContentError as error:  # e.g. an instructor this site does not know
            plan.problems.append(f"{prefix}/{error}" if prefix else str(error))
    return plan


def course_zip_import(*, data: bytes, user=None, name: str = "") -> ZipPlan:
    """Apply the import when the dry run finds no problem; all or nothing. The rows it writes
    are one revision in the admin's history."""
    plan = course_zip_plan(data=data)
    if not plan.ok:
        return plan
    with tempfile.TemporaryDirectory() as tmp:
        root = _unpack(data, Path(tmp))
        try:
            with transaction.atomic(), reversion.create_revision():
                report = course_import_published(path=root)
                reversion.set_user(user)
                reversion.set_comment(f"Imported from {name or 'a zip'}.")
        except PublishRefusedError as refused:
            plan.problems += refused.problems
            return plan
    plan.summary = report.summary()
    plan.created, plan.updated, plan.removed = report.created, report.updated, report.removed
    return plan

"""Courses in and out of the admin as zips: export, a dry run that says what would change (or
names the broken file and line, changing nothing), then an all-or-nothing apply, staff only."""

import io
import zipfile
from pathlib import Path

import pytest
from django.urls import reverse

from courses.models import Course
from courses.services.content_io import course_import
from tests.courses.conftest import db_snapshot, edit

pytestmark = pytest.mark.django_db
IMPORT_URL = "admin:courses_course_import_zip"


def _zip(folder: Path, top: str = "mini") -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(file, f"{top}/{file.relative_to(folder).as_posix()}")
    buffer.seek(0)
    buffer.name = "mini.zip"
    return buffer


def _dry_run(client, folder: Path):
    return client.post(reverse(IMPORT_URL), {"zip": _zip(folder)})


def test_a_broken_file_is_named_with_its_line_and_nothing_changes(client, admin_user, course_dir):
    course_import(path=course_dir)
    before = db_snapshot()
    edit(course_dir / "chapters/02-attention/quiz.yaml", "prompt: What does softmax", "prompt: [What does softmax")
    client.force_login(admin_user)

    page = _dry_run(client, course_dir).content.decode()

    assert "The zip cannot be imported; nothing was changed" in page
    assert "mini/chapters/02-attention/quiz.yaml:8: invalid YAML" in page
    assert "Apply the import" not in page
    assert db_snapshot() == before


def test_the_dry_run_says_what_would_change_and_apply_changes_it(client, admin_user, course_dir, local_backend):
    course_import(path=course_dir)
    edit(
        course_dir / "glossary.yaml",
        "- term: Query\n",
        "- term: Key\n  definition: What a position offers.\n- term: Query\n",
    )
    before = db_snapshot()
    client.force_login(admin_user)

    page = _dry_run(client, course_dir).content.decode()

    assert db_snapshot() == before  # a dry run changes nothing
    assert "Would import course &#x27;mini-course&#x27;" in page
    assert "<td>glossary term</td><td>1</td><td>0</td><td>0</td>" in page
    token = page.split('name="token" value="')[1].split('"')[0]

    response = client.post(reverse(IMPORT_URL), {"apply": "1", "token": token}, follow=True)

    assert "Imported course &#x27;mini-course&#x27;" in response.content.decode()
    assert Course.objects.get(slug="mini-course").glossary.filter(term="Key").exists()


def test_an_apply_that_would_publish_a_failing_exercise_imports_nothing_and_names_it(
    client, admin_user, course_dir, local_backend
):
    # The solution no longer passes its check: the chapter it is in is published.
    edit(course_dir / "chapters/01-first-steps/make-a-tensor.solution.py", "[1.0, 2.0, 3.0]", "[1.0, 2.0]")
    client.force_login(admin_user)
    page = _dry_run(client, course_dir).content.decode()
    token = page.split('name="token" value="')[1].split('"')[0]

    response = client.post(reverse(IMPORT_URL), {"apply": "1", "token": token}, follow=True)

    said = response.content.decode()
    assert "Nothing was imported" in said
    assert "Part 1 (first-steps): Exercise &#x27;make-a-tensor&#x27; fails validation" in said
    assert "the solution does not pass its check" in said
    assert not Course.objects.filter(slug="mini-course").exists()


def test_export_zips_the_course_folder_that_imports_again(client, admin_user, course_dir):
    course = course_import(path=course_dir).course
    client.force_login(admin_user)

    response = client.get(reverse("admin:courses_course_export_zip", args=[course.pk]))

    assert response["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert "mini-course/course.yaml" in names and "mini-course/chapters/01-first-steps/chapter.md" in names
    upload = io.BytesIO(response.content)
    upload.name = "mini-course.zip"
    page = client.post(reverse(IMPORT_URL), {"zip": upload}).content.decode()
    assert "Nothing: the course already says what the zip says." in page


def test_a_zip_reaching_outside_its_folder_is_refused(client, admin_user):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../evil.py", "x = 1\n")
    buffer.seek(0)
    buffer.name = "evil.zip"
    client.force_login(admin_user)

    page = client.post(reverse(IMPORT_URL), {"zip": buffer}).content.decode()

    assert "a path outside the course folder" in page


def test_only_staff_import_or_export(client, learner, instructor, course_dir):
    course = course_import(path=course_dir).course
    for user in (learner, instructor):
        client.force_login(user)
        for url in (reverse(IMPORT_URL), reverse("admin:courses_course_export_zip", args=[course.pk])):
            response = client.get(url)
            assert response.status_code == 302 and response.url.startswith(reverse("admin:login"))

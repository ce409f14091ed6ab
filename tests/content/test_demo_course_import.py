"""The demo course goes through the real importer: the folder is valid and complete."""

import pytest

from courses.models import Chapter, CourseModule, Exercise, GlossaryTerm, Question
from courses.services.content_io import course_import
from tests.content.course_files import (
    COURSE_DIR,
    chapter_folders,
    chapter_read,
    glossary_read,
    quiz_read,
    written_chapter_folders,
)


@pytest.mark.django_db
def test_it_imports_the_demo_course_with_its_outline_exercises_quizzes_and_vocabulary():
    report = course_import(path=COURSE_DIR)
    course = report.course
    chapters = Chapter.objects.filter(course=course)
    assert course.slug == "transformers-from-the-ground-up"
    folders = chapter_folders()
    # What the files hold, counted from the files: a new part changes both sides alike.
    exercises = sum(len(chapter_read(folder)[0].get("exercises") or []) for folder in folders)
    questions = sum(len(quiz_read(folder)) for folder in folders if (folder / "quiz.yaml").exists())
    assert chapters.count() == len(folders)
    assert list(chapters.filter(published=True).values_list("number", flat=True)) == [
        int(folder.name[:2]) for folder in written_chapter_folders()
    ]
    assert Exercise.objects.filter(chapter__course=course).count() == exercises
    assert Question.objects.filter(chapter__course=course).count() == questions
    assert GlossaryTerm.objects.filter(course=course).count() == len(glossary_read())
    assert sorted(CourseModule.objects.filter(course=course).values_list("name", flat=True)) == sorted(
        path.stem for path in (COURSE_DIR / "lib").glob("*.py")
    )
    exercise = Exercise.objects.get(chapter__course=course, slug="one-query-three-keys")
    assert exercise.starter_code == (COURSE_DIR / "chapters/02-attention-by-hand/one-query-three-keys.py").read_text()
    assert "def check(ns)" in exercise.check_code


@pytest.mark.django_db
def test_it_changes_nothing_when_the_demo_course_is_imported_twice():
    course_import(path=COURSE_DIR)
    assert not course_import(path=COURSE_DIR).changed

"""The demo course goes through the real importer: the folder is valid and complete."""

import pytest

from courses.models import Chapter, Exercise, GlossaryTerm, Question
from courses.services.content_io import course_import
from tests.content.course_files import COURSE_DIR


@pytest.mark.django_db
def test_it_imports_the_demo_course_with_its_outline_exercises_quizzes_and_vocabulary():
    report = course_import(path=COURSE_DIR)
    course = report.course
    chapters = Chapter.objects.filter(course=course)
    assert course.slug == "transformers-from-the-ground-up"
    assert chapters.count() == 10
    assert list(chapters.filter(published=True).values_list("number", flat=True)) == [2, 4]
    assert Exercise.objects.filter(chapter__course=course).count() == 4
    assert Question.objects.filter(chapter__course=course).count() == 10
    assert GlossaryTerm.objects.filter(course=course).count() == 37
    exercise = Exercise.objects.get(chapter__course=course, slug="one-query-three-keys")
    assert exercise.starter_code == (COURSE_DIR / "chapters/02-attention-by-hand/one-query-three-keys.py").read_text()
    assert "def check(ns)" in exercise.check_code


@pytest.mark.django_db
def test_it_changes_nothing_when_the_demo_course_is_imported_twice():
    course_import(path=COURSE_DIR)
    assert not course_import(path=COURSE_DIR).changed

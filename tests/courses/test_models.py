"""Rules the content must always obey are database constraints."""

import pytest
from django.db import IntegrityError, transaction

from courses.models import Chapter, Choice, Course, Exercise, GlossaryTerm, Question

pytestmark = pytest.mark.django_db


@pytest.fixture
def chapter():
    course = Course.objects.create(slug="c", title="C")
    return Chapter.objects.create(course=course, number=1, slug="one", title="One", body="Some words here.")


def test_it_refuses_two_chapters_with_one_number(chapter):
    with pytest.raises(IntegrityError), transaction.atomic():
        Chapter.objects.create(course=chapter.course, number=1, slug="other", title="Other")


def test_it_refuses_a_glossary_term_that_differs_only_in_case(chapter):
    GlossaryTerm.objects.create(course=chapter.course, term="Attention", definition="d")
    with pytest.raises(IntegrityError), transaction.atomic():
        GlossaryTerm.objects.create(course=chapter.course, term="attention", definition="d")


def test_it_refuses_two_correct_choices(chapter):
    question = Question.objects.create(chapter=chapter, position=1, prompt="?")
    Choice.objects.create(question=question, position=1, text="a", is_correct=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Choice.objects.create(question=question, position=2, text="b", is_correct=True)


@pytest.mark.parametrize("seconds", [0, 121])
def test_it_refuses_a_time_limit_out_of_range(chapter, seconds):
    with pytest.raises(IntegrityError), transaction.atomic():
        Exercise.objects.create(chapter=chapter, slug="e", title="E", time_limit_s=seconds)


def test_it_refuses_an_unknown_level():
    with pytest.raises(IntegrityError), transaction.atomic():
        Course.objects.create(slug="x", title="X", level="expert")


def test_it_counts_reading_time_from_the_text():
    course = Course.objects.create(slug="c", title="C")
    chapter = Chapter.objects.create(course=course, number=1, slug="a", title="A", body="word " * 450)
    assert chapter.reading_minutes == 3
    assert chapter.compute_reading_minutes("word " * 200) == 4

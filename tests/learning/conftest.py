"""The ten-part course of the reading-page tests, with a five-question quiz in every part: in
each question choice 2 is right, and every choice explains itself."""

import pytest
from django.urls import reverse

from courses.models import Chapter, Choice, Question
from tests.frontend.conftest import course_build

QUESTIONS = 5
CHOICES = 3
RIGHT = 2


def quiz_add(*, chapter: Chapter, questions: int = QUESTIONS) -> list[Question]:
    made = []
    for number in range(1, questions + 1):
        question = Question.objects.create(
            chapter=chapter, position=number, prompt=f"Part {chapter.number}, question {number}: which one?"
        )
        for position in range(1, CHOICES + 1):
            Choice.objects.create(
                question=question,
                position=position,
                text=f"Choice {position} of question {number}",
                is_correct=position == RIGHT,
                explanation=f"Why choice {position} of question {number} is {'right' if position == RIGHT else 'wrong'}.",
            )
        made.append(question)
    return made


def right(question: Question) -> Choice:
    return question.choices.get(is_correct=True)


def wrong(question: Question, n: int = 1) -> Choice:
    return question.choices.filter(is_correct=False).order_by("position")[n - 1]


def questions_of(course, number: int) -> list[Question]:
    return list(Question.objects.filter(chapter__course=course, chapter__number=number).order_by("position"))


def chapter_url(course, number: int) -> str:
    return reverse("frontend:chapter", args=[course.slug, course.chapters.get(number=number).slug])


def quiz_url(course, number: int) -> str:
    return reverse("frontend:quiz_answer", args=[course.slug, course.chapters.get(number=number).slug])


@pytest.fixture
def course(db):
    course = course_build()
    for chapter in course.chapters.all():
        quiz_add(chapter=chapter)
    return course


@pytest.fixture
def part_2(course):
    return course.chapters.get(number=2)


@pytest.fixture
def browser():
    """Chromium for the quiz, progress and accessibility browser tests (a module may define its own)."""
    from tests.learning.browser_support import browser_launch

    yield from browser_launch()

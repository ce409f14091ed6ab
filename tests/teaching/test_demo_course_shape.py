"""The benchmark data takes the demo course's shape, so the instructor dashboard shows every part,
question and exercise the course publishes, read from its files: a new part needs no code change."""

from pathlib import Path

import pytest

from courses.services.content_io import course_read
from teaching.services.course_data import course_data_generate

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "courses" / "content" / "transformers"


def test_the_dashboard_shows_every_published_part_question_and_exercise_of_the_demo_course(client):
    spec = course_read(path=DEMO)
    published = [chapter for chapter in spec.chapters if chapter.published]
    made = course_data_generate(slug="demo-shape", learners=30, runs=300, like=spec)

    client.force_login(made.instructor)
    page = client.get(f"/teach/{made.course.slug}/").content.decode()

    assert [c.title for c in made.course.chapters.order_by("number")] == [c.title for c in published]
    for chapter in published:
        assert chapter.title in page
        for exercise in chapter.exercises:
            assert exercise.title in page
    assert made.course.chapters.filter(questions__isnull=False).distinct().count() == sum(
        1 for c in published if c.questions
    )
    assert sum(len(c.questions) for c in published) == sum(ch.questions.count() for ch in made.course.chapters.all())

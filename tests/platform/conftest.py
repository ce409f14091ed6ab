import pytest

from courses.models import Chapter, Course, Exercise


@pytest.fixture
def exercise(db):
    """One published exercise a learner may run and save."""
    course = Course.objects.create(slug="limits", title="Limits", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
    return Exercise.objects.create(chapter=chapter, slug="big", title="Big")

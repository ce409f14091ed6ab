"""The access rule for one exercise (checked on the row, for every press of Run) agrees with the
rule for the list of exercises (a query), for every kind of user and every state of publication."""

import itertools

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from accounts.models import User
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
from courses.selectors import exercise_get_for_user, exercise_list_for_user


@pytest.fixture
def exercises(db):
    """One exercise per (course published, chapter published), in courses taught by `teacher`."""
    teacher = user_create(username="teacher", password="pw-for-tests-1", role=User.Role.INSTRUCTOR)
    made = []
    for n, (course_published, chapter_published) in enumerate(itertools.product((True, False), repeat=2)):
        course = Course.objects.create(slug=f"c{n}", title=f"C{n}", published=course_published)
        course.instructors.add(teacher)
        chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=chapter_published)
        made.append(Exercise.objects.create(chapter=chapter, slug=f"e{n}", title=f"E{n}"))
    return teacher, made


def users(teacher) -> dict:
    return {
        "anonymous": AnonymousUser(),
        "learner": user_create(username="learner", password="pw-for-tests-1"),
        "instructor of another course": user_create(
            username="other", password="pw-for-tests-1", role=User.Role.INSTRUCTOR
        ),
        "instructor of the course": teacher,
        "admin": user_create(username="admin", password="pw-for-tests-1", role=User.Role.ADMIN),
    }


def test_one_exercise_is_open_exactly_when_the_list_holds_it(exercises):
    teacher, made = exercises
    for who, user in users(teacher).items():
        listed = set(exercise_list_for_user(user=user).values_list("pk", flat=True))
        for exercise in made:
            try:
                exercise_get_for_user(user=user, exercise_id=exercise.pk)
                opened = True
            except Http404:
                opened = False
            assert opened == (exercise.pk in listed), (who, exercise.slug)
    # The rule is not trivially all or nothing: a learner opens only the published one.
    learner = User.objects.get(username="learner")
    assert set(exercise_list_for_user(user=learner).values_list("slug", flat=True)) == {"e0"}


def test_an_exercise_that_does_not_exist_is_not_found(exercises):
    teacher, _ = exercises
    with pytest.raises(Http404):
        exercise_get_for_user(user=teacher, exercise_id=10**9)

"""Reads for courses, and the one place that says who may see what.

- Staff (admins) see everything, published or not: they author and preview.
- Instructors see published courses and every course they teach.
- Everyone else, anonymous visitors included, sees published courses and, inside them,
  published chapters only. An unpublished chapter is listed as "coming soon" but cannot be opened.

Anything a user may not see is answered as if it did not exist (404), never 403, so its
existence does not leak.
"""

from django.db.models import QuerySet
from django.http import Http404

from courses.models import Chapter, Course, Exercise


def _is_staff(user) -> bool:
    return bool(user and user.is_authenticated and user.is_staff)


def course_list_for_user(*, user) -> QuerySet[Course]:
    courses = Course.objects.all()
    if _is_staff(user):
        return courses
    if user and user.is_authenticated:
        return courses.filter(published=True) | courses.filter(instructors=user)
    return courses.filter(published=True)


def course_get_for_user(*, user, slug: str) -> Course:
    course = course_list_for_user(user=user).filter(slug=slug).distinct().first()
    if course is None:
        raise Http404("No such course.")
    return course


def chapter_is_open_for_user(*, chapter: Chapter, user) -> bool:
    return chapter.published or _is_staff(user) or course_taught_by(course=chapter.course, user=user)


def course_taught_by(*, course: Course, user) -> bool:
    return bool(user and user.is_authenticated) and course.instructors.filter(pk=user.pk).exists()


def chapter_get_for_user(*, user, course_slug: str, chapter_slug: str) -> Chapter:
    course = course_get_for_user(user=user, slug=course_slug)
    chapter = Chapter.objects.filter(course=course, slug=chapter_slug).select_related("course").first()
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        raise Http404("No such chapter.")
    return chapter


def exercise_list_for_user(*, user) -> QuerySet[Exercise]:
    """The exercises a user may run: those in chapters the user may open."""
    exercises = Exercise.objects.select_related("chapter__course")
    if _is_staff(user):
        return exercises
    if not (user and user.is_authenticated):
        return exercises.none()
    visible = exercises.filter(chapter__course__published=True, chapter__published=True)
    taught = exercises.filter(chapter__course__instructors=user)
    return (visible | taught).distinct()


def exercise_get_for_user(*, user, exercise_id: int) -> Exercise:
    exercise = exercise_list_for_user(user=user).filter(pk=exercise_id).first()
    if exercise is None:
        raise Http404("No such exercise.")
    return exercise

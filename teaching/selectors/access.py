"""Who may open a course's dashboards: its instructors and admins (courses.selectors' rule, the
one that also opens its drafts); anyone else is answered 404 as if the course did not exist."""

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import Http404

from courses.models import Course
from courses.selectors import user_is_staff


def course_list_taught_by(*, user) -> QuerySet[Course]:
    """The courses whose dashboards the user may open: all of them for admins, the ones they
    teach for instructors, none for anyone else."""
    if user_is_staff(user):
        return Course.objects.all()
    if not (user and user.is_authenticated):
        return Course.objects.none()
    return Course.objects.filter(instructors=user)


def course_get_for_teaching(*, user, slug: str) -> Course:
    course = course_list_taught_by(user=user).filter(slug=slug).first()
    if course is None:
        raise Http404("No such course.")
    return course


def learner_get_for_teaching(*, course: Course, learner_id: int):
    """A learner enrolled in the course (the caller may teach it); anyone else is 404."""
    learner = get_user_model().objects.filter(pk=learner_id, enrolments__course=course).first()
    if learner is None:
        raise Http404("No such learner in this course.")
    return learner

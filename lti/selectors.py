"""Reads for the LTI pages: what a platform may place, and an instructor's LMS classes."""

from django.db.models import Count, Prefetch

from courses.models import Chapter, Course, Exercise
from lti.models import Context, ContextCohort, Platform
from lti.services.launch import LaunchRefused


def platform_get(*, pk: int) -> Platform:
    platform = Platform.objects.filter(pk=pk, is_active=True).first()
    if platform is None:
        raise LaunchRefused("This learning system is no longer registered with this tool.")
    return platform


def placeable_courses(*, platform: Platform) -> list[Course]:
    """The published courses the platform may place, each with its published parts (`parts`) and
    their exercises, in three queries."""
    exercises = Prefetch("exercises", queryset=Exercise.objects.order_by("position"))
    parts = Prefetch(
        "chapters",
        queryset=Chapter.objects.filter(published=True).order_by("number").prefetch_related(exercises),
        to_attr="parts",
    )
    return list(platform.courses.filter(published=True).order_by("title").prefetch_related(parts))


def classes_for(*, user) -> list[Context]:
    """The LMS classes the user teaches (every class, for staff), each with its cohorts
    (`cohort_rows`: the course, the cohort and its number of members)."""
    contexts = Context.objects.select_related("platform").order_by("platform__name", "title", "pk")
    if not user.is_staff:
        contexts = contexts.filter(instructors=user)
    rows = ContextCohort.objects.select_related("course", "cohort").annotate(members=Count("cohort__memberships"))
    return list(
        contexts.prefetch_related(Prefetch("cohorts", queryset=rows.order_by("course__title"), to_attr="cohort_rows"))
    )


def class_taught_by(*, context: Context, user) -> bool:
    return user.is_staff or context.instructors.filter(pk=user.pk).exists()

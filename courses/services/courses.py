"""Writes for courses as a whole."""

from collections.abc import Iterable

from django.db.models import QuerySet
from django.utils import timezone

from courses.models import Course


def course_set_published(*, courses: QuerySet[Course] | Iterable[Course], published: bool) -> int:
    """Publish or unpublish courses; returns how many changed. Chapters keep their own flag."""
    ids = [course.pk for course in courses]
    return (
        Course.objects.filter(pk__in=ids)
        .exclude(published=published)
        .update(published=published, updated_at=timezone.now())
    )

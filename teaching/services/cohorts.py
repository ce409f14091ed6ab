"""Writes for cohorts: an instructor or admin makes one for a course; learners join it with its
invite code (or an admin adds them). Joining a cohort enrols the learner in its course, so the
dashboards, which start from enrolments, count them."""

import secrets

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from courses.models import Course, Enrolment
from courses.selectors import course_staffed_by
from teaching.models import Cohort, CohortMembership
from teaching.selectors import cohort_get_by_invite_code

INVITE_CODE_BYTES = 9  # 12 URL-safe characters: not guessable, short enough to read out


def cohort_invite_code_new() -> str:
    return secrets.token_urlsafe(INVITE_CODE_BYTES)


def cohort_create(*, course: Course, name: str, created_by) -> Cohort:
    """Raises PermissionDenied unless `created_by` teaches the course or is an admin, and
    ValidationError for an empty or duplicate name."""
    if not course_staffed_by(course=course, user=created_by):
        raise PermissionDenied("Only the course's instructors and admins make its cohorts.")
    name = name.strip()
    if not name:
        raise ValidationError("Give the cohort a name.")
    if Cohort.objects.filter(course=course, name__iexact=name).exists():
        raise ValidationError("The course already has a cohort with this name.")
    try:
        with transaction.atomic():
            return Cohort.objects.create(
                course=course,
                name=name[:100],
                invite_code=cohort_invite_code_new(),
                created_by=created_by,
            )
    except IntegrityError as error:  # a concurrent create with the same name
        raise ValidationError("The course already has a cohort with this name.") from error


def cohort_member_add(*, cohort: Cohort, user) -> CohortMembership:
    """Add a learner (idempotent) and enrol them in the cohort's course."""
    with transaction.atomic():
        Enrolment.objects.get_or_create(user=user, course_id=cohort.course_id)
        membership, _ = CohortMembership.objects.get_or_create(cohort=cohort, user=user)
    return membership


def cohort_join(*, invite_code: str, user) -> CohortMembership:
    """A signed-in learner joins by invite code (the invite page; sign-up with an invite joins
    the cohort it found with cohort_member_add). Raises Http404 for an unknown code."""
    cohort = cohort_get_by_invite_code(invite_code=invite_code)
    return cohort_member_add(cohort=cohort, user=user)

"""Cohorts: a cohort groups some of a course's learners (a class, a term) so instructors can filter
the dashboards by it. Learners join with the cohort's invite code, or an admin adds them
(teaching.services.cohorts). The course knows nothing of its cohorts: courses/ sits below
teaching/.

The tables keep the names they had when courses held these models (teaching/migrations/0009_cohorts
moved the models, not the rows): teaching/migrations/0006_enrolled_starters fills the counts with
the live rebuild (teaching.services.course_counts), which reads cohorts through these models, and
on a database migrated from before 0006 it runs before any later migration could rename them."""

from django.conf import settings
from django.db import models

from courses.models import Course


class Cohort(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="cohorts")
    name = models.CharField(max_length=100)
    invite_code = models.CharField(max_length=32, unique=True, help_text="Learners join at /join/<code>/.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="CohortMembership", related_name="cohorts", blank=True
    )

    class Meta:
        db_table = "courses_cohort"  # see the module's docstring
        ordering = ["course", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["course", "name"],
                name="cohort_unique_name",
                violation_error_message="The course already has a cohort with this name.",
            ),
            models.CheckConstraint(condition=~models.Q(invite_code=""), name="cohort_invite_code_set"),
        ]

    def __str__(self):
        return f"{self.name} ({self.course.slug})"


class CohortMembership(models.Model):
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cohort_memberships")
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "courses_cohortmembership"
        ordering = ["cohort", "joined_at"]
        constraints = [models.UniqueConstraint(fields=["cohort", "user"], name="cohort_membership_unique")]
        indexes = [models.Index(fields=["user", "cohort"], name="cohort_membership_user")]

    def __str__(self):
        return f"{self.user} in {self.cohort}"

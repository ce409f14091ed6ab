"""Read-only panels on the authoring pages: an exercise's last validation, and what learners do
with it (the instructor dashboard's own figures)."""

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from courses.models import Exercise, ExerciseValidation
from courses.selectors_dashboard import DashboardFilters, exercise_stats_list
from courses.services.authoring import course_modules, exercise_code_digest


def validation_panel(exercise: Exercise | None) -> str:
    if exercise is None or not exercise.pk:
        return "Save the exercise to validate it."
    validation = ExerciseValidation.objects.filter(exercise=exercise).first()
    stale = bool(
        validation
        and validation.digest
        != exercise_code_digest(exercise=exercise, modules=course_modules(chapter=exercise.chapter))
    )
    return mark_safe(  # noqa: S308 - rendered by a template that escapes every value
        render_to_string("admin/courses/_validation.html", {"validation": validation, "stale": stale})
    )


def exercise_stats_panel(exercise: Exercise | None) -> str:
    """Pass rate, median runs to pass and the commonest errors, read with the dashboard's selector
    (its two queries for the whole course) rather than a query of its own."""
    if exercise is None or not exercise.pk:
        return "-"
    course = exercise.chapter.course
    stats = next(
        (
            row
            for row in exercise_stats_list(course=course, filters=DashboardFilters())
            if row.exercise.pk == exercise.pk
        ),
        None,
    )
    try:
        dashboard_url = reverse("frontend:teach_course", kwargs={"course_slug": course.slug})
    except Exception:
        dashboard_url = f"/teach/{course.slug}/"
    return mark_safe(  # noqa: S308 - rendered by a template that escapes every value
        render_to_string("admin/courses/_exercise_stats.html", {"stats": stats, "dashboard_url": dashboard_url})
    )

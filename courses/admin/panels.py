"""Read-only panels on the authoring pages: an exercise's last validation. (What learners do with
it, the instructor dashboard's own figures, is added by the teaching app: teaching/admin.py.)"""

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from courses.models import Exercise, ExerciseValidation
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

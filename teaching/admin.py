"""The teaching app's part of the admin: cohorts, and what learners do with an exercise on the
exercise's authoring page (the dashboard's own figures). The exercise admin is the courses app's;
this app extends it, so courses/ never imports teaching/."""

from django.contrib import admin
from django.db.models import Count
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from courses.admin.exercises import ExerciseAdmin
from courses.models import Exercise
from teaching.models import Cohort, CohortMembership
from teaching.selectors import DashboardFilters, exercise_stats_list
from teaching.services.cohorts import cohort_invite_code_new, cohort_member_add

# --- The exercise page's learners panel ----------------------------------------------------


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
        render_to_string("admin/teaching/_exercise_stats.html", {"stats": stats, "dashboard_url": dashboard_url})
    )


class TeachingExerciseAdmin(ExerciseAdmin):
    fields = (*ExerciseAdmin.fields, "learners")
    readonly_fields = (*ExerciseAdmin.readonly_fields, "learners")

    @admin.display(description="Learners")
    def learners(self, obj):
        return exercise_stats_panel(obj)


admin.site.unregister(Exercise)
admin.site.register(Exercise, TeachingExerciseAdmin)


# --- Cohorts -------------------------------------------------------------------------------


class CohortMembershipInline(admin.TabularInline):
    model = CohortMembership
    extra = 0
    raw_id_fields = ("user",)
    readonly_fields = ("joined_at",)


@admin.register(Cohort)
class CohortAdmin(admin.ModelAdmin):
    list_display = ("name", "course", "invite_code", "member_count", "created_at")
    list_filter = ("course",)
    search_fields = ("name", "invite_code", "course__title")
    list_select_related = ("course",)
    readonly_fields = ("created_by", "created_at")
    fields = ("course", "name", "invite_code", "created_by", "created_at")
    inlines = (CohortMembershipInline,)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(member_total=Count("memberships"))

    @admin.display(description="Members", ordering="member_total")
    def member_count(self, obj):
        return obj.member_total

    def get_changeform_initial_data(self, request):
        return {**super().get_changeform_initial_data(request), "invite_code": cohort_invite_code_new()}

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        # Members an admin adds are enrolled in the course too, as if they had joined by invite.
        instances = formset.save(commit=False)
        for obj in formset.deleted_objects:
            obj.delete()
        for membership in instances:
            cohort_member_add(cohort=form.instance, user=membership.user)
        formset.save_m2m()

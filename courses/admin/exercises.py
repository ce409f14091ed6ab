"""Exercises in the admin: the validation rules a save obeys, and an exercise's own page (its
validation, its history, what learners do with it). Exercises are added on their chapter's page."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet, ModelForm

from courses.admin.history import HistoryAdmin
from courses.admin.panels import validation_panel
from courses.models import Exercise, ExerciseTrick, Hint
from courses.services.authoring import (
    course_modules,
    exercise_code_digest,
    exercise_spec,
    exercise_validate,
    exercise_validation_current,
    spec_problems,
)
from courses.services.chapters import chapter_reading_time_refresh
from courses.services.validation import hint_problem


def form_spec(form):
    """The exercise as the form would save it."""
    exercise = form.instance
    for name, value in form.cleaned_data.items():
        if name in {f.name for f in Exercise._meta.fields} and name not in ("id", "chapter"):
            setattr(exercise, name, value)
    return exercise_spec(exercise=exercise)


def refuse_publishing_failures(chapter, specs) -> None:
    """A published chapter takes no exercise that fails validation; a draft takes anything."""
    problems = [
        f"Exercise '{spec.slug}' fails validation: {'; '.join(found)}"
        for spec in specs
        for found in [spec_problems(spec=spec, chapter=chapter)]
        if found
    ]
    if problems:
        raise ValidationError(
            [f"The chapter cannot be published: {problem}" for problem in problems]
            + ["Untick Published to save it as a draft."]
        )


def report_validation(model_admin, request, validation, *, quiet_pass: bool = False) -> None:
    name = validation.exercise.slug
    if not validation.ok:
        model_admin.message_user(
            request, f"Exercise '{name}' fails validation: {'; '.join(validation.problems)}", messages.ERROR
        )
    elif not quiet_pass:
        model_admin.message_user(request, f"Exercise '{name}' passes validation ({validation.took_ms} ms).")


# --- Exercises on their own page: validation, history, what learners do with it ----------------


class ExerciseForm(ModelForm):
    class Meta:
        model = Exercise
        fields = (
            "title",
            "instructions",
            "starter_code",
            "check_code",
            "probe_code",
            "solution_code",
            "time_limit_s",
            "needs_gpu",
        )

    def clean(self):
        cleaned = super().clean()
        if not self.errors and self.instance.chapter.published:
            chapter = self.instance.chapter
            modules = course_modules(chapter=chapter)
            saved = Exercise.objects.get(pk=self.instance.pk)
            spec = form_spec(self)
            if exercise_code_digest(exercise=spec, modules=modules) != exercise_code_digest(
                exercise=saved, modules=modules
            ):
                refuse_publishing_failures(chapter, [spec])
        return cleaned


class HintFormSet(BaseInlineFormSet):
    """The rule the course files obey (validate_course): a hint never quotes a line of the
    solution, judged against the code this same save stores."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        exercise = self.instance
        problems = [
            f"Hint {data.get('position')}: {problem}."
            for form in self.forms
            for data in [form.cleaned_data]
            if data and not data.get("DELETE")
            for problem in [
                hint_problem(data.get("text") or "", solution=exercise.solution_code, starter=exercise.starter_code)
            ]
            if problem
        ]
        if problems:
            raise ValidationError(problems)


class HintInline(admin.TabularInline):
    model = Hint
    formset = HintFormSet
    fields = ("position", "text")
    ordering = ("position",)
    extra = 0
    formfield_overrides = {Hint._meta.get_field("text").__class__: {"widget": forms.Textarea(attrs={"rows": 3})}}


class TrickInline(admin.StackedInline):
    """Programs written to pass without doing the exercise: validation requires the check to fail
    each one (courses/content/FORMAT.md)."""

    model = ExerciseTrick
    fields = ("name", "code")
    ordering = ("name",)
    extra = 0
    verbose_name = "trick program"


@admin.register(Exercise)
class ExerciseAdmin(HistoryAdmin):
    """Exercises are added on their chapter's page (the body places them); here one is edited
    with its validation, its history and its learners' figures."""

    form = ExerciseForm
    list_display = ("title", "slug", "chapter", "position")
    list_filter = ("chapter__course",)
    list_select_related = ("chapter__course",)
    search_fields = ("title", "slug", "chapter__title")
    fields = (
        "chapter",
        ("slug", "title"),
        "instructions",
        "starter_code",
        "check_code",
        "probe_code",
        "solution_code",
        ("time_limit_s", "needs_gpu"),
        "verdicts",
    )
    readonly_fields = ("chapter", "slug", "verdicts")
    inlines = (HintInline, TrickInline)

    class Media:
        # The learners' editor, bundled for the admin (frontend/src/admin.js), and its styles.
        js = ("dist/admin.js",)
        css = {"all": ("frontend/pygments.css", "courses/authoring.css")}

    def has_add_permission(self, request):
        return False

    @admin.display(description="Validation")
    def verdicts(self, obj):
        return validation_panel(obj)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        chapter_reading_time_refresh(chapter=obj.chapter)
        current = exercise_validation_current(exercise=obj)
        report_validation(self, request, current or exercise_validate(exercise=obj), quiet_pass=bool(current))

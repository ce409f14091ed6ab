"""Authoring in the Django admin: courses, chapters with their exercises and quiz, choices, glossary.

The admin enforces the same rules as the course files (courses/content/FORMAT.md), so a course
authored here exports to a folder that imports again.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from courses.admin.course_zip import CourseZipAdminMixin
from courses.admin.exercises import form_spec, refuse_publishing_failures, report_validation
from courses.admin.history import HistoryAdmin
from courses.admin.panels import validation_panel
from courses.admin.preview import preview_view
from courses.models import Chapter, Choice, Course, CourseModule, Exercise, GlossaryTerm, Question
from courses.rules import (
    DEFAULT_QUESTION_KIND,
    ChoiceDraft,
    exercise_marker_problems,
    marker_sentence,
    question_sentence,
    question_type_choices,
    question_type_get,
)
from courses.services.authoring import (
    chapter_publish_problems,
    course_modules,
    exercise_code_digest,
    exercise_validate,
    exercise_validation_current,
)
from courses.services.chapters import (
    PARK,
    chapter_exercises_follow_body,
    chapter_reading_time_refresh,
    chapter_set_published,
    rows_park,
)
from courses.services.courses import course_set_published


def chapter_preview_url(chapter_id: int) -> str:
    try:
        return reverse("frontend:chapter_preview", kwargs={"chapter_id": chapter_id})
    except NoReverseMatch:
        # The reading pages own the preview view; the path stays usable before they register it.
        return f"/preview/chapters/{chapter_id}/"


def _save_formset_in_safe_order(formset) -> list:
    """Save an inline formset so the database constraints hold after every write: deletions
    first, rows whose position changes parked, wrong choices before the correct one."""
    instances = formset.save(commit=False)
    for obj in formset.deleted_objects:
        obj.delete()
    if "position" in {f.name for f in formset.model._meta.fields}:
        existing = [obj for obj in instances if obj.pk]
        stored = dict(formset.model.objects.filter(pk__in=[o.pk for o in existing]).values_list("pk", "position"))
        rows_park(rows=[obj for obj in existing if stored.get(obj.pk) != obj.position], field_name="position")
    for obj in sorted(instances, key=lambda obj: bool(getattr(obj, "is_correct", False))):
        obj.save()
    formset.save_m2m()
    return instances


# --- Courses -------------------------------------------------------------------------------


class CourseModuleInline(admin.StackedInline):
    """The course's lib/ modules: what every exercise and check of the course can import."""

    model = CourseModule
    extra = 0
    fields = ("name", "source")
    ordering = ("name",)


@admin.register(Course)
class CourseAdmin(CourseZipAdminMixin, admin.ModelAdmin):
    inlines = (CourseModuleInline,)
    list_display = ("title", "slug", "level", "published", "chapter_count", "updated_at")
    list_filter = ("published", "level", "instructors")
    search_fields = ("title", "slug", "summary")
    readonly_fields = ("export_link",)
    prepopulated_fields = {"slug": ("title",)}
    filter_horizontal = ("instructors",)
    actions = ("publish", "unpublish")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(chapter_total=Count("chapters"))

    @admin.display(description="Chapters", ordering="chapter_total")
    def chapter_count(self, obj):
        return obj.chapter_total

    @admin.action(description="Publish selected courses")
    def publish(self, request, queryset):
        changed = course_set_published(courses=queryset, published=True)
        self.message_user(request, f"Published {changed} course(s).", messages.SUCCESS)

    @admin.action(description="Unpublish selected courses")
    def unpublish(self, request, queryset):
        changed = course_set_published(courses=queryset, published=False)
        self.message_user(request, f"Unpublished {changed} course(s).", messages.SUCCESS)


# --- Chapters, with their exercises and questions inline -----------------------------------


class ExerciseFormSet(BaseInlineFormSet):
    """Exercises and the [[exercise:slug]] markers of the chapter body must agree, by the rules the
    course files obey (courses/rules.py)."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        slugs = [
            form.cleaned_data["slug"]
            for form in self.forms
            if form.cleaned_data and not form.cleaned_data.get("DELETE") and form.cleaned_data.get("slug")
        ]
        problems = exercise_marker_problems(self.instance.body, slugs=slugs)
        if problems:
            raise ValidationError([marker_sentence(problem) for problem in problems])
        if self.instance.published:
            live = [form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
            was_published = (
                bool(self.instance.pk) and Chapter.objects.filter(pk=self.instance.pk, published=True).exists()
            )
            specs = [form_spec(form) for form in live]
            if was_published:
                # Already public: only the exercises this save changes must pass (the others
                # passed when it was published, or are validated after this save).
                modules = course_modules(chapter=self.instance)
                stored = {
                    exercise.slug: exercise_code_digest(exercise=exercise, modules=modules)
                    for exercise in Exercise.objects.filter(chapter=self.instance)
                }
                specs = [
                    spec
                    for spec in specs
                    if stored.get(spec.slug) != exercise_code_digest(exercise=spec, modules=modules)
                ]
            refuse_publishing_failures(self.instance, specs)


class ExerciseInline(admin.StackedInline):
    model = Exercise
    formset = ExerciseFormSet
    extra = 0
    fields = (
        ("slug", "title"),
        "position",
        "instructions",
        "starter_code",
        "check_code",
        "probe_code",
        "solution_code",
        ("time_limit_s", "needs_gpu"),
        "verdicts",
    )
    readonly_fields = ("position", "verdicts")
    ordering = ("position",)
    show_change_link = True  # its own page: history and what learners do with it

    @admin.display(description="Validation")
    def verdicts(self, obj):
        return validation_panel(obj)


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0
    fields = ("position", "prompt", "choice_count")
    readonly_fields = ("choice_count",)
    ordering = ("position",)
    show_change_link = True  # choices are edited on the question's own page

    def has_add_permission(self, request, obj=None):
        # A question added here would have no choices (the admin nests no inline in an inline) and
        # would stop every learner at it: questions are added on their own page, choices and all.
        return False

    @admin.display(description="Choices")
    def choice_count(self, obj):
        return obj.choices.count() if obj.pk else 0


@admin.register(Chapter)
class ChapterAdmin(HistoryAdmin):
    list_display = ("title", "course", "number", "published", "reading_minutes", "preview_link")
    list_display_links = ("title",)
    list_filter = ("course", "published")
    list_select_related = ("course",)
    search_fields = ("title", "slug", "summary", "body", "course__title")
    ordering = ("course__title", "number")
    prepopulated_fields = {"slug": ("title",)}
    readonly_fields = ("reading_minutes", "preview_link", "add_question_link", "validate_button")
    fields = (
        "course",
        ("number", "slug"),
        "title",
        "summary",
        "lede",
        "body",
        "published",
        ("reading_minutes", "preview_link"),
        "add_question_link",
        "validate_button",
    )
    inlines = (ExerciseInline, QuestionInline)
    actions = ("publish", "unpublish")

    class Media:
        # The learners' editor, bundled for the admin (frontend/src/admin.js), and its styles.
        js = ("dist/admin.js",)
        css = {"all": ("frontend/pygments.css", "courses/authoring.css")}

    @admin.display(description="Preview")
    def preview_link(self, obj):
        if not obj or not obj.pk:
            return "Save the chapter to preview it."
        return format_html('<a href="{}" target="_blank" rel="noopener">Preview</a>', chapter_preview_url(obj.pk))

    @admin.display(description="Exercises")
    def validate_button(self, obj):
        if not obj or not obj.pk:
            return "Save the chapter to validate its exercises."
        url = reverse("admin:courses_chapter_validate", args=[obj.pk])
        return format_html(
            '<button type="submit" class="button" formaction="{}" name="_validate">Validate</button> '
            "runs each saved exercise's starter and solution with its check in the sandbox "
            "(saving validates the exercises that changed).",
            url,
        )

    def get_urls(self):
        validate = path(
            "<path:object_id>/validate/",
            self.admin_site.admin_view(self.validate_view),
            name="courses_chapter_validate",
        )
        preview = path(
            "preview-body/",
            self.admin_site.admin_view(lambda request: preview_view(self, request)),
            name="courses_chapter_preview_body",
        )
        return [validate, preview, *super().get_urls()]

    def validate_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        chapter = self.get_object(request, object_id)
        if chapter is None or not self.has_change_permission(request, chapter):
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        for exercise in chapter.exercises.order_by("position"):
            report_validation(self, request, exercise_validate(exercise=exercise))
        return HttpResponseRedirect(reverse("admin:courses_chapter_change", args=[chapter.pk]))

    @admin.display(description="Quiz")
    def add_question_link(self, obj):
        if not obj or not obj.pk:
            return "Save the chapter to add quiz questions."
        url = f"{reverse('admin:courses_question_add')}?{urlencode({'chapter': obj.pk})}"
        return format_html('<a href="{}">Add a question</a> with its choices', url)

    def save_formset(self, request, form, formset, change):
        if formset.model is Exercise:
            # A new exercise takes a free position for now; the body then decides the order.
            for index, exercise_form in enumerate(formset.extra_forms):
                exercise_form.instance.position = PARK + 100 + index
        _save_formset_in_safe_order(formset)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        chapter_exercises_follow_body(chapter=form.instance)
        chapter_reading_time_refresh(chapter=form.instance)
        # Validate on save: exercises whose code changed since their last validation run now, and
        # the page the admin returns to shows each verdict.
        for exercise in form.instance.exercises.order_by("position"):
            current = exercise_validation_current(exercise=exercise)
            report_validation(self, request, current or exercise_validate(exercise=exercise), quiet_pass=bool(current))

    @admin.action(description="Publish selected chapters")
    def publish(self, request, queryset):
        ready = []
        for chapter in queryset:
            problems = chapter_publish_problems(chapter=chapter)
            if problems:
                self.message_user(request, f"'{chapter}' was not published: {' '.join(problems)}", messages.ERROR)
            else:
                ready.append(chapter)
        changed = chapter_set_published(chapters=ready, published=True)
        self.message_user(request, f"Published {changed} chapter(s).", messages.SUCCESS)

    @admin.action(description="Unpublish selected chapters")
    def unpublish(self, request, queryset):
        changed = chapter_set_published(chapters=queryset, published=False)
        self.message_user(request, f"Unpublished {changed} chapter(s).", messages.SUCCESS)


# --- Questions, with their choices inline --------------------------------------------------


class ChoiceFormSet(BaseInlineFormSet):
    """The choices obey the rules of the question's type, the same the course files obey
    (courses/rules.py): for a single-choice question, 2 to 6 choices, exactly one correct, and an
    explanation on every wrong one (it is what a learner reads after picking it)."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        try:
            question_type = question_type_get(self.instance.kind)
        except KeyError:
            return  # the question's own form says the type is unknown
        live = [form.cleaned_data for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        drafts = [
            ChoiceDraft(
                text=(data.get("text") or "").strip(),
                is_correct=bool(data.get("is_correct")),
                explanation=(data.get("explanation") or "").strip(),
            )
            for data in live
        ]
        problems = question_type.problems(drafts)
        if problems:
            names = [draft.text for draft in drafts]
            raise ValidationError([question_sentence(problem, choice_names=names) for problem in problems])


class ChoiceInline(admin.TabularInline):
    model = Choice
    formset = ChoiceFormSet
    fields = ("position", "text", "is_correct", "explanation")
    ordering = ("position",)

    def get_extra(self, request, obj=None, **kwargs):
        return 0 if obj else question_type_get(DEFAULT_QUESTION_KIND).min_choices


@admin.register(Question)
class QuestionAdmin(HistoryAdmin):
    list_display = ("short_prompt", "chapter", "position", "kind")
    list_filter = ("chapter__course", "chapter", "kind")
    list_select_related = ("chapter__course",)
    search_fields = ("prompt", "choices__text", "chapter__title")
    ordering = ("chapter__course__title", "chapter__number", "position")
    fields = ("chapter", "position", "kind", "prompt")
    inlines = (ChoiceInline,)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "kind":
            # The registered question types, read on each request: a type added in code shows here.
            return forms.ChoiceField(
                choices=question_type_choices(), label="Type", help_text=db_field.help_text, initial=db_field.default
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="Prompt", ordering="prompt")
    def short_prompt(self, obj):
        return str(obj)

    def save_formset(self, request, form, formset, change):
        _save_formset_in_safe_order(formset)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        chapter_reading_time_refresh(chapter=form.instance.chapter)


# --- Glossary ------------------------------------------------------------------------------


@admin.register(GlossaryTerm)
class GlossaryTermAdmin(HistoryAdmin):
    list_display = ("term", "course", "short_definition")
    list_filter = ("course",)
    search_fields = ("term", "definition")
    list_select_related = ("course",)

    @admin.display(description="Definition")
    def short_definition(self, obj):
        return obj.definition if len(obj.definition) <= 100 else obj.definition[:99] + "…"

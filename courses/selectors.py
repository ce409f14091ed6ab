"""Reads for courses, and the one place that says who may see what.

- Staff (admins) see everything, published or not: they author and preview.
- Instructors see published courses and every course they teach.
- Everyone else, anonymous visitors included, sees published courses and, inside them,
  published chapters only. An unpublished chapter is listed as "coming soon" but cannot be opened.

Anything a user may not see is answered as if it did not exist (404), never 403, so its
existence does not leak.
"""

from dataclasses import dataclass

from django.db.models import Count, DateTimeField, IntegerField, OuterRef, QuerySet, Subquery, Sum, TextField, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from courses.models import Chapter, Course, Exercise, ExerciseState, GlossaryTerm


def _is_staff(user) -> bool:
    return bool(user and user.is_authenticated and user.is_staff)


def course_list_for_user(*, user) -> QuerySet[Course]:
    courses = Course.objects.all()
    if _is_staff(user):
        return courses
    if user and user.is_authenticated:
        return courses.filter(published=True) | courses.filter(instructors=user)
    return courses.filter(published=True)


def course_get_for_user(*, user, slug: str) -> Course:
    course = course_list_for_user(user=user).filter(slug=slug).distinct().first()
    if course is None:
        raise Http404("No such course.")
    return course


def chapter_is_open_for_user(*, chapter: Chapter, user) -> bool:
    return chapter.published or course_drafts_visible_to(course=chapter.course, user=user)


def course_drafts_visible_to(*, course: Course, user) -> bool:
    """Whether the user may open the course's unpublished chapters: staff and its instructors."""
    return _is_staff(user) or course_taught_by(course=course, user=user)


def course_taught_by(*, course: Course, user) -> bool:
    return bool(user and user.is_authenticated) and course.instructors.filter(pk=user.pk).exists()


def chapter_get_for_user(*, user, course_slug: str, chapter_slug: str) -> Chapter:
    course = course_get_for_user(user=user, slug=course_slug)
    chapter = Chapter.objects.filter(course=course, slug=chapter_slug).select_related("course").first()
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        raise Http404("No such chapter.")
    return chapter


def exercise_list_for_user(*, user) -> QuerySet[Exercise]:
    """The exercises a user may run: those in chapters the user may open."""
    exercises = Exercise.objects.select_related("chapter__course")
    if _is_staff(user):
        return exercises
    if not (user and user.is_authenticated):
        return exercises.none()
    visible = exercises.filter(chapter__course__published=True, chapter__published=True)
    taught = exercises.filter(chapter__course__instructors=user)
    return (visible | taught).distinct()


def exercise_state_get(*, user, exercise: Exercise) -> ExerciseState | None:
    return ExerciseState.objects.filter(user=user, exercise=exercise).first()


def exercise_list_with_state(*, exercises: QuerySet[Exercise], user) -> QuerySet[Exercise]:
    """The exercises with the learner's saved code (`learner_code`, None until first saved) and
    first pass (`learner_passed_at`), in the same query: a chapter page costs the same whatever
    its number of exercises. Anonymous visitors (or user=None) get both as None."""
    if not (user and user.is_authenticated):
        return exercises.annotate(learner_code=Value(None, TextField()), learner_passed_at=Value(None, DateTimeField()))
    states = ExerciseState.objects.filter(user=user, exercise=OuterRef("pk"))
    return exercises.annotate(
        learner_code=Subquery(states.filter(code_saved_at__isnull=False).values("code")[:1]),
        learner_passed_at=Subquery(states.values("passed_at")[:1]),
    )


def exercise_get_for_user(*, user, exercise_id: int) -> Exercise:
    exercise = exercise_list_for_user(user=user).filter(pk=exercise_id).first()
    if exercise is None:
        raise Http404("No such exercise.")
    return exercise


# --- Page-level reads: each loads what one page shows in a fixed number of queries. ----------


def course_catalog_for_user(*, user) -> QuerySet[Course]:
    """Visible courses with their number of parts and the reading time of their published parts."""
    minutes = (
        Chapter.objects.filter(course=OuterRef("pk"), published=True)
        .values("course")
        .annotate(total=Sum("reading_minutes"))
        .values("total")
    )
    return (
        Course.objects.filter(pk__in=course_list_for_user(user=user).values("pk"))
        .annotate(
            part_count=Count("chapters"),
            reading_minutes_total=Coalesce(Subquery(minutes, output_field=IntegerField()), 0),
        )
        .order_by("title")
    )


@dataclass(frozen=True)
class Part:
    """One line of a course outline: the chapter and whether this user may open it."""

    chapter: Chapter
    is_open: bool


def course_outline_for_user(*, course: Course, user) -> list[Part]:
    drafts_visible = course_drafts_visible_to(course=course, user=user)
    chapters = Chapter.objects.filter(course=course).defer("body").order_by("number")
    parts = []
    for chapter in chapters:
        chapter.course = course  # spares a query per chapter in templates and access checks
        parts.append(Part(chapter=chapter, is_open=chapter.published or drafts_visible))
    return parts


def glossary_list_for_course(*, course: Course) -> list[GlossaryTerm]:
    return list(GlossaryTerm.objects.filter(course=course).only("id", "term", "definition"))


@dataclass(frozen=True)
class ChapterPage:
    """Everything a chapter page shows besides the rendered body."""

    chapter: Chapter
    parts: list[Part]
    previous: Chapter | None
    next: Chapter | None
    exercises: list[Exercise]
    glossary: list[GlossaryTerm]

    @property
    def part_count(self) -> int:
        return len(self.parts)


def chapter_page_for(*, chapter: Chapter, user) -> ChapterPage:
    """The chapter's surroundings as `user` sees them: previous and next skip parts the user cannot
    open. The glossary is loaded once, for both the inline definitions and the vocabulary panel."""
    parts = course_outline_for_user(course=chapter.course, user=user)
    open_before = [p.chapter for p in parts if p.is_open and p.chapter.number < chapter.number]
    open_after = [p.chapter for p in parts if p.is_open and p.chapter.number > chapter.number]
    return ChapterPage(
        chapter=chapter,
        parts=parts,
        previous=open_before[-1] if open_before else None,
        next=open_after[0] if open_after else None,
        exercises=list(exercise_list_with_state(exercises=chapter.exercises.order_by("position"), user=user)),
        glossary=glossary_list_for_course(course=chapter.course),
    )


def chapter_get_for_preview(*, user, chapter_id: int) -> Chapter:
    """Any chapter, published or not, for staff; nobody else learns that it exists."""
    if not _is_staff(user):
        raise Http404("No such chapter.")
    chapter = Chapter.objects.filter(pk=chapter_id).select_related("course").first()
    if chapter is None:
        raise Http404("No such chapter.")
    return chapter

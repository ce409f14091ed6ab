"""Reads for a learner's progress through courses: the marks on each part of a course's outline,
how far they are in each course of the catalog, and where "Continue" takes them."""

from dataclasses import dataclass, field

from django.db.models import Count, Q, Subquery
from django.urls import reverse

from courses.models import Chapter, ChapterProgress, Course, Enrolment, Exercise
from courses.selectors import Part, chapter_is_open_for_user, exercises_passed_by


@dataclass(frozen=True)
class PartProgress:
    """A learner's marks on one part of a course."""

    complete: bool = False
    quiz_finished: bool = False
    quiz_score: int | None = None
    exercises_passed: int = 0
    exercise_count: int = 0

    @property
    def started(self) -> bool:
        return self.complete or self.quiz_finished or self.exercises_passed > 0


@dataclass(frozen=True)
class CourseProgress:
    """How far a learner is in a course, and where "Continue" takes them."""

    course: Course
    complete_count: int
    published_count: int
    continue_chapter: Chapter | None = None
    continue_place: str = ""
    parts: dict[int, PartProgress] = field(default_factory=dict)

    @property
    def percent(self) -> int:
        return round(100 * self.complete_count / self.published_count) if self.published_count else 0

    @property
    def continue_url(self) -> str:
        if self.continue_chapter is None:
            return ""
        url = reverse("frontend:chapter", args=[self.course.slug, self.continue_chapter.slug])
        return f"{url}#{self.continue_place}" if self.continue_place else url


def _continue_target(*, enrolment: Enrolment | None, user) -> tuple[Chapter | None, str]:
    chapter = enrolment.last_chapter if enrolment is not None else None
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        return None, ""
    return chapter, enrolment.last_place


def course_progress_for_learner(*, user, course: Course, parts: list[Part]) -> CourseProgress | None:
    """Progress through one course for its outline page, in three queries; None for visitors."""
    if not (user and user.is_authenticated):
        return None
    enrolment = Enrolment.objects.filter(user=user, course=course).select_related("last_chapter").first()
    if enrolment is not None and enrolment.last_chapter is not None:
        enrolment.last_chapter.course = course
    rows = {
        row.chapter_id: row
        for row in ChapterProgress.objects.filter(user=user, chapter__course=course).only(
            "chapter_id", "quiz_finished_at", "quiz_score", "completed_at"
        )
    }
    mine = exercises_passed_by(user=user)
    exercise_counts = {
        row["chapter"]: row
        for row in Exercise.objects.filter(chapter__course=course)
        .values("chapter")
        .annotate(total=Count("id"), passed=Count("id", filter=Q(id__in=Subquery(mine))))
    }
    marks = {}
    for part in parts:
        row = rows.get(part.chapter.pk)
        counts = exercise_counts.get(part.chapter.pk, {})
        marks[part.chapter.pk] = PartProgress(
            complete=bool(row and row.completed_at),
            quiz_finished=bool(row and row.quiz_finished_at),
            quiz_score=row.quiz_score if row else None,
            exercises_passed=counts.get("passed", 0),
            exercise_count=counts.get("total", 0),
        )
    published = [part.chapter for part in parts if part.chapter.published]
    chapter, place = _continue_target(enrolment=enrolment, user=user)
    return CourseProgress(
        course=course,
        complete_count=sum(1 for c in published if marks[c.pk].complete),
        published_count=len(published),
        continue_chapter=chapter,
        continue_place=place,
        parts=marks,
    )


def catalog_progress_for_learner(*, user, courses) -> dict[int, CourseProgress]:
    """Progress per course for the catalog cards, in three queries whatever the number of courses;
    only courses the learner is enrolled in have an entry. Empty for visitors."""
    if not (user and user.is_authenticated):
        return {}
    enrolments = list(
        Enrolment.objects.filter(user=user, course__in=[c.pk for c in courses]).select_related("last_chapter")
    )
    if not enrolments:
        return {}
    course_ids = [e.course_id for e in enrolments]
    published = dict(
        Chapter.objects.filter(course__in=course_ids, published=True)
        .values("course")
        .annotate(n=Count("id"))
        .values_list("course", "n")
    )
    complete = dict(
        ChapterProgress.objects.filter(
            user=user, chapter__course__in=course_ids, chapter__published=True, completed_at__isnull=False
        )
        .values("chapter__course")
        .annotate(n=Count("id"))
        .values_list("chapter__course", "n")
    )
    by_id = {course.pk: course for course in courses}
    progress = {}
    for enrolment in enrolments:
        course = by_id[enrolment.course_id]
        if enrolment.last_chapter is not None:
            enrolment.last_chapter.course = course
        chapter, place = _continue_target(enrolment=enrolment, user=user)
        progress[course.pk] = CourseProgress(
            course=course,
            complete_count=complete.get(course.pk, 0),
            published_count=published.get(course.pk, 0),
            continue_chapter=chapter,
            continue_place=place,
        )
    return progress

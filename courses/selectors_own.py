"""Reads for a learner's own copy of the course's module (courses/own_module.py): the modules a run
installs, and the learner's pieces for the completion page and the downloads."""

from django.db.models import Count, Q, Subquery

from courses.models import Chapter, Course, Exercise, OwnPiece
from courses.own_module import OwnSection, has_parts, module_for_run, piece_names
from courses.selectors import course_modules_for_exercise, course_staffed_by, exercises_passed_by

Modules = tuple[tuple[str, str], ...]
# A part number past any course's last: every part counts as earlier.
ALL_PARTS = 10**6


def own_sections(*, user, course_id: int, up_to_part: int | None = None) -> list[OwnSection]:
    """The learner's own pieces in a course, by part then exercise order (`up_to_part`: none of a
    later part)."""
    rows = OwnPiece.objects.filter(user=user, exercise__chapter__course_id=course_id)
    if up_to_part is not None:
        rows = rows.filter(exercise__chapter__number__lte=up_to_part)
    rows = rows.order_by("exercise__chapter__number", "exercise__position", "exercise_id")
    return [
        OwnSection(part=part, exercise_title=title, names=tuple(names), source=source)
        for part, title, names, source in rows.values_list(
            "exercise__chapter__number", "exercise__title", "names", "source"
        )
    ]


def parts_passed(*, user, course_id: int, before: int | None = None) -> set[int]:
    """The numbers of the parts whose every exercise the learner has passed (one query, of the
    learner's own states only: selectors.exercises_passed_by)."""
    chapters = Chapter.objects.filter(course_id=course_id)
    if before is not None:
        chapters = chapters.filter(number__lt=before)
    mine = exercises_passed_by(user=user)
    rows = chapters.annotate(
        total=Count("exercises"), passed=Count("exercises", filter=Q(exercises__in=Subquery(mine)))
    ).values_list("number", "total", "passed")
    return {number for number, total, done in rows if done >= total}


def run_modules(*, exercise: Exercise, user) -> tuple[Modules, Modules]:
    """(the modules the learner's program and probe import, the modules the check imports): the
    learner's own copy of each course module, made for this exercise, and the course's as written
    (empty when the two are the same). The course's staff and instructors get every earlier part's
    reference pieces, as if they had passed them."""
    reference = course_modules_for_exercise(exercise=exercise)
    if user is None or not any(has_parts(source) for _, source in reference):
        return reference, ()  # the same for every run: no further query
    chapter = exercise.chapter
    course: Course = chapter.course
    passed = (
        None
        if course_staffed_by(course=course, user=user)
        else parts_passed(user=user, course_id=course.pk, before=chapter.number)
    )
    own = own_sections(user=user, course_id=course.pk, up_to_part=chapter.number)
    asked = piece_names(exercise.starter_code) if exercise.probe_code else []
    mine = tuple(
        (name, module_for_run(source, part=chapter.number, asked=asked, passed_parts=passed, own=own, name=name))
        for name, source in reference
    )
    return mine, (() if mine == reference else reference)


def own_modules_whole(*, modules: Modules, own: list[OwnSection]) -> Modules:
    """The learner's copy of the course's modules to take home: every part's pieces, theirs
    (`own`: own_sections) where they wrote them and the course's elsewhere."""
    if not own:
        return modules
    return tuple((name, module_for_run(source, part=ALL_PARTS, own=own, name=name)) for name, source in modules)

"""Writes for chapters: reading time and publishing."""

from collections.abc import Iterable

from django.db.models import QuerySet
from django.utils import timezone

from courses.models import Chapter, Choice, Exercise, Question

# While rows are renumbered they are first moved out of the way (PARK + i), so the unique
# constraints on (course, number) and (chapter, position) hold after every single write.
# Numbers and positions stay below PARK.
PARK = 1000


def rows_park(*, rows: Iterable, field_name: str) -> None:
    """Move rows whose number or position is about to change out of the range the new values take."""
    for index, row in enumerate(rows):
        type(row).objects.filter(pk=row.pk).update(**{field_name: PARK + index})


def chapter_exercises_follow_body(*, chapter: Chapter) -> None:
    """Number a chapter's exercises in the order the body places them; unplaced ones go last."""
    placed = chapter.exercise_slugs_in_body()
    exercises = list(Exercise.objects.filter(chapter=chapter))
    exercises.sort(key=lambda e: (placed.index(e.slug) if e.slug in placed else len(placed), e.position, e.pk))
    wanted = {exercise.pk: position for position, exercise in enumerate(exercises, start=1)}
    moving = [exercise for exercise in exercises if exercise.position != wanted[exercise.pk]]
    rows_park(rows=moving, field_name="position")
    for exercise in moving:
        Exercise.objects.filter(pk=exercise.pk).update(position=wanted[exercise.pk])
        exercise.position = wanted[exercise.pk]


def chapter_reading_extra_text(*, chapter: Chapter) -> str:
    """What a learner reads in a chapter besides its lede and body: the exercises (title,
    instructions, starter code) and the quiz (prompts and choices)."""
    parts: list[str] = []
    for title, instructions, starter in Exercise.objects.filter(chapter=chapter).values_list(
        "title", "instructions", "starter_code"
    ):
        parts += [title, instructions, starter]
    parts += Question.objects.filter(chapter=chapter).values_list("prompt", flat=True)
    parts += Choice.objects.filter(question__chapter=chapter).values_list("text", flat=True)
    return "\n".join(parts)


def chapter_reading_time_refresh(*, chapter: Chapter) -> int:
    """Recompute reading_minutes from the chapter's whole text.

    Chapter.save() counts the lede and body only (it cannot see rows written after it), so
    anything that writes exercises or questions calls this afterwards.
    """
    minutes = chapter.compute_reading_minutes(chapter_reading_extra_text(chapter=chapter))
    if minutes != chapter.reading_minutes:
        # update() rather than save(): save() would count the body alone again.
        Chapter.objects.filter(pk=chapter.pk).update(reading_minutes=minutes)
        chapter.reading_minutes = minutes
    return minutes


def chapter_set_published(*, chapters: QuerySet[Chapter] | Iterable[Chapter], published: bool) -> int:
    """Publish or unpublish chapters; returns how many changed."""
    ids = [chapter.pk for chapter in chapters]
    return (
        Chapter.objects.filter(pk__in=ids)
        .exclude(published=published)
        .update(published=published, updated_at=timezone.now())
    )

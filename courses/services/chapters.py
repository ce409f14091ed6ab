"""Writes for chapters: reading time and publishing."""

from collections.abc import Iterable

from django.db.models import QuerySet
from django.utils import timezone

from courses.models import Chapter, Choice, Exercise, Question


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

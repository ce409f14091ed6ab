"""Template helpers for the course completion page and the links to it."""

from django import template

register = template.Library()


@register.simple_tag
def finish_state(page, quiz) -> str:
    """Where the learner stands at the end of the chapter on `page` (a selectors.ChapterPage), read
    from what the page has already loaded: "" while an exercise or the quiz is left, "course" when
    they finished it and every part of the course is open, "so-far" when parts are still to come."""
    finished = all(exercise.learner_passed_at for exercise in page.exercises) and (not quiz.total or quiz.finished)
    if not finished:
        return ""
    return "course" if all(part.is_open for part in page.parts) else "so-far"

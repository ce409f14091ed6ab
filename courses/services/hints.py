"""Writes for hints: a learner reveals an exercise's hints one at a time, in order.

A reveal is kept for good (HintReveal): the hint stays shown on every later visit, and the
dashboards count it. Revealing is idempotent, so a double click or a replayed request never
reveals two hints.
"""

from django.db import IntegrityError, transaction

from courses.models import Exercise, Hint, HintReveal


class HintOutOfTurnError(ValueError):
    """A hint the exercise does not have, or one asked for before the hints that come first."""


def hint_reveal(*, user, exercise: Exercise, position: int) -> Hint:
    """Reveal hint `position` of `exercise` to `user`, who may open the exercise (the caller got it
    through courses.selectors.exercise_get_for_user). Asking again for a hint already revealed
    returns it and writes nothing; asking for one past the next is refused."""
    hints = list(exercise.hints.order_by("position"))
    hint = next((hint for hint in hints if hint.position == position), None)
    if hint is None:
        count = len(hints)
        raise HintOutOfTurnError(
            f"This exercise has no hint {position}; it has {count} hint{'s' if count != 1 else ''}."
        )
    revealed = set(HintReveal.objects.filter(user=user, exercise=exercise).values_list("hint_id", flat=True))
    if hint.pk in revealed:
        return hint
    following = next(candidate for candidate in hints if candidate.pk not in revealed)
    if following.pk != hint.pk:
        raise HintOutOfTurnError(f"Hints come one at a time: the next one is hint {following.position}.")
    try:
        # The unique (user, hint) constraint settles two tabs revealing the same hint at once.
        with transaction.atomic():
            HintReveal.objects.create(user=user, hint=hint, exercise=exercise)
    except IntegrityError:
        pass
    return hint

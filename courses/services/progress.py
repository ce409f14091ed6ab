"""Writes for a learner's progress: enrolment, saved code, passed exercises, chapter completion."""

import re

from django.db import IntegrityError, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from courses.models import Chapter, ChapterProgress, Course, Enrolment, Exercise, ExerciseState, OwnPiece, QuizAnswer
from courses.own_module import course_names, own_source, piece_names
from courses.selectors import course_modules_for_exercise
from courses.signals import learner_progressed
from ecplatform.code import code_check


def enrolment_touch(*, user, course: Course, chapter: Chapter | None = None, place: str = "") -> Enrolment:
    """Enrol the learner on first visit and remember where they are now."""
    enrolment, _ = Enrolment.objects.get_or_create(user=user, course=course)
    if chapter is not None:
        enrolment.last_chapter = chapter
        enrolment.last_place = place[:100]
    enrolment.save()
    return enrolment


ANY_BASE = object()


class CodeConflictError(Exception):
    """The code was saved elsewhere (another tab, another device) since the version this save
    started from: saving would overwrite an edit its writer never saw. `state` holds the other."""

    def __init__(self, state: ExerciseState):
        super().__init__("This code was saved elsewhere since this version was loaded.")
        self.state = state


def exercise_code_save(*, user, exercise: Exercise, code: str, base=ANY_BASE) -> ExerciseState:
    """Save the learner's code. Code a run would refuse is refused here in the same words
    (ecplatform.code: CodeRefusedError, a ValueError), and nothing is saved.

    `base`: when the saving page says which save its code started from (that save's time, None
    for none), a different save kept since raises CodeConflictError, unless it holds this very
    code; without it, the last save wins (API clients that keep no versions)."""
    code_check(code)
    with transaction.atomic():
        state, _ = ExerciseState.objects.select_for_update().get_or_create(user=user, exercise=exercise)
        if base is not ANY_BASE and state.code_saved_at != base and state.code != code:
            raise CodeConflictError(state)
        state.code, state.code_saved_at = code, timezone.now()
        state.save(update_fields=["code", "code_saved_at"])
    return state


def exercise_record_pass(*, user, exercise: Exercise, code: str | None = None) -> None:
    """A run of this exercise passed its check: the first pass is kept, later ones change nothing
    (one read: a learner passes the same exercise again and again as they try variations, and
    the terminal write of each of those runs waits for this). `code`: the passing run's, whose
    pieces of a write-the-body exercise become the learner's own (the latest pass's)."""
    with transaction.atomic():
        if code is not None and exercise.probe_code:
            own_piece_keep(user=user, exercise=exercise, code=code)
        state, _ = ExerciseState.objects.select_for_update().get_or_create(user=user, exercise=exercise)
        if state.passed_at is not None:
            return
        state.passed_at = timezone.now()
        state.save(update_fields=["passed_at"])
        learner_progressed.send(
            sender=ExerciseState,
            user_id=user.pk,
            course_id=exercise.chapter.course_id,
            at=state.passed_at,
            chapter_completed=False,
        )
        chapter_progress_refresh(user=user, chapter=exercise.chapter)


def own_piece_keep(*, user, exercise: Exercise, code: str) -> OwnPiece | None:
    """Keep what a passing run of a write-the-body exercise defines as the learner's own pieces
    (courses/own_module.py); None when it defines none of them."""
    names = piece_names(exercise.starter_code)
    if not names:
        return None
    taken = set().union(*(course_names(source) for _, source in course_modules_for_exercise(exercise=exercise)))
    source = own_source(code, names, taken)
    if not source:
        return None
    piece, _ = OwnPiece.objects.update_or_create(
        user=user, exercise=exercise, defaults={"names": names, "source": source, "passed_at": timezone.now()}
    )
    return piece


def chapter_progress_refresh(*, user, chapter: Chapter) -> ChapterProgress:
    """Recompute whether the chapter is complete: quiz finished (every question answered right,
    at whatever try) and every exercise's check passed. Completion, once reached, stays."""
    progress, _ = ChapterProgress.objects.get_or_create(user=user, chapter=chapter)
    questions = set(chapter.questions.values_list("id", flat=True))
    answered_right = set(
        QuizAnswer.objects.filter(user=user, question__chapter=chapter, is_correct=True).values_list(
            "question_id", flat=True
        )
    )
    now = timezone.now()
    changed = []
    if questions and questions <= answered_right and progress.quiz_finished_at is None:
        progress.quiz_finished_at = now
        progress.quiz_score = QuizAnswer.objects.filter(
            user=user, question__chapter=chapter, attempt=1, is_correct=True
        ).count()
        changed += ["quiz_finished_at", "quiz_score"]
    quiz_done = not questions or progress.quiz_finished_at is not None
    # A subquery, not exclude(states__user=..., states__passed_at__isnull=False): on a multi-valued
    # relation exclude() may match the two conditions on different rows (another learner's pass).
    passed = ExerciseState.objects.filter(user=user, passed_at__isnull=False).values("exercise_id")
    exercises_left = Exercise.objects.filter(chapter=chapter).exclude(pk__in=passed).exists()
    if quiz_done and not exercises_left and progress.completed_at is None:
        progress.completed_at = now
        changed.append("completed_at")
    if changed:
        with transaction.atomic():  # the completion and what others keep of it, together
            progress.save(update_fields=changed)
            if "completed_at" in changed:
                learner_progressed.send(
                    sender=ChapterProgress, user_id=user.pk, course_id=chapter.course_id, at=now, chapter_completed=True
                )
    return progress


def enrolment_visit(*, user, course: Course, chapter: Chapter | None = None) -> None:
    """A learner opened the course page or one of its chapters: enrol them on the first visit and
    note the chapter. The place on the page is kept while they stay in the same chapter, so coming
    back to /<chapter>/#quiz does not forget "quiz". One query once enrolled: it runs on every
    page view."""
    now = timezone.now()
    changes = {"last_seen_at": now}
    if chapter is not None:
        changes["last_place"] = Case(When(last_chapter=chapter, then=F("last_place")), default=Value(""))
        changes["last_chapter"] = chapter
    if Enrolment.objects.filter(user=user, course=course).update(**changes):
        return
    try:
        with transaction.atomic():
            Enrolment.objects.create(user=user, course=course, last_chapter=chapter)
    except IntegrityError:  # a second tab enrolled the learner in the meantime
        Enrolment.objects.filter(user=user, course=course).update(**changes)


PLACE_RE = re.compile(r"^(quiz|exercise-[a-z0-9][a-z0-9-]*)$")


def enrolment_place_save(*, user, chapter: Chapter, place: str) -> Enrolment:
    """Remember the place on the chapter's page the learner reached: "quiz" or "exercise-<slug>"
    of one of the chapter's exercises. Anything else raises ValueError and changes nothing."""
    if not PLACE_RE.match(place):
        raise ValueError("Unknown place on this page.")
    if place == "quiz":
        valid = chapter.questions.exists()
    else:
        valid = chapter.exercises.filter(slug=place.removeprefix("exercise-")).exists()
    if not valid:
        raise ValueError("Unknown place on this page.")
    return enrolment_touch(user=user, course=chapter.course, chapter=chapter, place=place)

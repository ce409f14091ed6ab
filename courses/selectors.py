"""Reads for courses, and the one place that says who may see what.

- Staff (admins) see everything, published or not: they author and preview.
- Instructors see published courses and every course they teach.
- Everyone else, anonymous visitors included, sees published courses and, inside them,
  published chapters only. An unpublished chapter is listed as "coming soon" but cannot be opened.

Anything a user may not see is answered as if it did not exist (404), never 403, so its
existence does not leak.

A course by invitation is seen (listed, its outline shown) but admits only the learners enrolled
in it, its instructors and staff: every read that serves a learner's action in one of its
chapters (reading it, its glossary, running or saving an exercise, answering its quiz, noting the
place, the completion page) raises InviteRequired for anyone else, and nothing is written.
"""

import hashlib
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db.models import (
    Count,
    DateTimeField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    TextField,
    Value,
)
from django.db.models.functions import Coalesce
from django.http import Http404

from courses.models import (
    Chapter,
    Choice,
    Course,
    CourseModule,
    Enrolment,
    Exercise,
    ExerciseState,
    GlossaryTerm,
    Hint,
    HintReveal,
    Question,
    QuizAnswer,
)


def user_is_staff(user) -> bool:
    """Admins: every course, published or not, and every dashboard (the one staff rule)."""
    return bool(user and user.is_authenticated and user.is_staff)


def course_list_for_user(*, user) -> QuerySet[Course]:
    courses = Course.objects.all()
    if user_is_staff(user):
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
    return chapter.published or course_staffed_by(course=chapter.course, user=user)


def course_staffed_by(*, course: Course, user) -> bool:
    """Staff and the course's instructors: who may open its unpublished chapters and its
    dashboards (teaching.selectors)."""
    return user_is_staff(user) or course_taught_by(course=course, user=user)


def course_taught_by(*, course: Course, user) -> bool:
    return bool(user and user.is_authenticated) and course.instructors.filter(pk=user.pk).exists()


def course_open_to_learner(*, course: Course, user) -> bool:
    """Whether the user may open the course's chapters and run its exercises. A course open to
    enrolment: anyone who sees it. One by invitation: learners enrolled in it (they joined one of its
    cohorts with the invite link, or an admin added them), its instructors and staff."""
    if course.enrolment == Course.EnrolmentPolicy.OPEN or course_staffed_by(course=course, user=user):
        return True
    return bool(user and user.is_authenticated) and Enrolment.objects.filter(user=user, course=course).exists()


INVITE_REQUIRED = "This course is by invitation: join it with the invite link your instructor gives out."


class InviteRequired(PermissionDenied):
    """A course by invitation, to someone it does not admit (course_open_to_learner): answered 403
    with the reason (the course itself is listed, so its existence is no secret)."""

    def __init__(self, course: Course):
        super().__init__(INVITE_REQUIRED)
        self.course = course


def course_check_admitted(*, course: Course, user) -> None:
    if not course_open_to_learner(course=course, user=user):
        raise InviteRequired(course)


def chapter_get_for_user(*, user, course_slug: str, chapter_slug: str) -> Chapter:
    """A chapter the user may open (404 otherwise) of a course that admits them (InviteRequired)."""
    course = course_get_for_user(user=user, slug=course_slug)
    chapter = Chapter.objects.filter(course=course, slug=chapter_slug).select_related("course").first()
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        raise Http404("No such chapter.")
    course_check_admitted(course=chapter.course, user=user)
    return chapter


def exercise_list_for_user(*, user) -> QuerySet[Exercise]:
    """The exercises a user may run: those in chapters the user may open, of courses that admit them."""
    exercises = Exercise.objects.select_related("chapter__course")
    if user_is_staff(user):
        return exercises
    if not (user and user.is_authenticated):
        return exercises.none()
    visible = exercises.filter(chapter__course__published=True, chapter__published=True).filter(
        Q(chapter__course__enrolment=Course.EnrolmentPolicy.OPEN)
        | Q(chapter__course__in=Enrolment.objects.filter(user=user).values("course_id"))
    )
    taught = exercises.filter(chapter__course__instructors=user)
    return (visible | taught).distinct()


def course_modules_for_exercise(*, exercise: Exercise) -> tuple[tuple[str, str], ...]:
    """The (name, source) of every module of the exercise's course, by name: what a run of the
    exercise installs in its sandbox (RunRequest.modules)."""
    rows = CourseModule.objects.filter(course__chapters__exercises=exercise).order_by("name")
    return tuple(rows.values_list("name", "source"))


def exercises_passed_by(*, user) -> QuerySet[ExerciseState]:
    """The ids of the exercises the learner has passed, as a subquery (`id__in=...`). Counts of a
    learner's passes go through it, and so through their (user, exercise) index: a join of the
    exercises' states would read every learner's."""
    return ExerciseState.objects.filter(user=user, passed_at__isnull=False).values("exercise_id")


def exercise_state_get(*, user, exercise: Exercise) -> ExerciseState | None:
    return ExerciseState.objects.filter(user=user, exercise=exercise).first()


def exercise_list_with_state(*, exercises: QuerySet[Exercise], user) -> QuerySet[Exercise]:
    """The exercises with the learner's saved code (`learner_code`, None until first saved, and
    `learner_code_saved_at`, the version the page's editor starts from) and
    first pass (`learner_passed_at`), in the same query: a chapter page costs the same whatever
    its number of exercises. Anonymous visitors (or user=None) get both as None."""
    if not (user and user.is_authenticated):
        return exercises.annotate(
            learner_code=Value(None, TextField()),
            learner_code_saved_at=Value(None, DateTimeField()),
            learner_passed_at=Value(None, DateTimeField()),
        )
    states = ExerciseState.objects.filter(user=user, exercise=OuterRef("pk"))
    return exercises.annotate(
        learner_code=Subquery(states.filter(code_saved_at__isnull=False).values("code")[:1]),
        learner_code_saved_at=Subquery(states.values("code_saved_at")[:1]),
        learner_passed_at=Subquery(states.values("passed_at")[:1]),
    )


def exercise_get_for_user(*, user, exercise_id: int) -> Exercise:
    """The rule of exercise_list_for_user for one exercise, checked on the row: one plain query for
    a published exercise of an open course (every press of Run asks), one more for a draft of a
    course one teaches or a course by invitation (InviteRequired for a learner it does not admit)."""
    try:
        exercise = Exercise.objects.select_related("chapter__course").get(pk=exercise_id)
    except (Exercise.DoesNotExist, ValueError, TypeError):
        raise Http404("No such exercise.") from None
    chapter, course = exercise.chapter, exercise.chapter.course
    if not (user and user.is_authenticated):
        raise Http404("No such exercise.")
    if not ((course.published and chapter.published) or course_staffed_by(course=course, user=user)):
        raise Http404("No such exercise.")
    course_check_admitted(course=course, user=user)
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
    drafts_visible = course_staffed_by(course=course, user=user)
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


@dataclass(frozen=True)
class ExerciseHints:
    """An exercise's hints as one learner sees them, in order, each with its `revealed_at` (None:
    not revealed). Pages and the API show the revealed ones' text only."""

    hints: list[Hint]

    @property
    def count(self) -> int:
        return len(self.hints)

    @property
    def revealed(self) -> list[Hint]:
        return [hint for hint in self.hints if hint.revealed_at is not None]

    @property
    def next_position(self) -> int | None:
        """The hint to reveal next: the first not revealed (None: all are)."""
        return next((hint.position for hint in self.hints if hint.revealed_at is None), None)


def exercise_hints_for_learner(*, user, exercises: list[Exercise]) -> dict[int, ExerciseHints]:
    """{exercise id: its hints for `user`}, for exercises with any hints, in one query."""
    hints = Hint.objects.filter(exercise__in=[exercise.pk for exercise in exercises]).order_by("exercise", "position")
    if user and user.is_authenticated:
        reveal = HintReveal.objects.filter(user=user, hint=OuterRef("pk")).values("revealed_at")[:1]
        hints = hints.annotate(revealed_at=Subquery(reveal, output_field=DateTimeField()))
    else:
        hints = hints.annotate(revealed_at=Value(None, output_field=DateTimeField()))
    by_exercise: dict[int, list[Hint]] = {}
    for hint in hints:
        by_exercise.setdefault(hint.exercise_id, []).append(hint)
    return {exercise_id: ExerciseHints(hints=rows) for exercise_id, rows in by_exercise.items()}


def chapter_page_for(*, chapter: Chapter, user) -> ChapterPage:
    """The chapter's surroundings as `user` sees them: previous and next skip parts the user cannot
    open. The glossary is loaded once, for both the inline definitions and the vocabulary panel."""
    parts = course_outline_for_user(course=chapter.course, user=user)
    open_before = [p.chapter for p in parts if p.is_open and p.chapter.number < chapter.number]
    open_after = [p.chapter for p in parts if p.is_open and p.chapter.number > chapter.number]
    exercises = list(exercise_list_with_state(exercises=chapter.exercises.order_by("position"), user=user))
    hints = exercise_hints_for_learner(user=user, exercises=exercises)
    for exercise in exercises:
        exercise.learner_hints = hints.get(exercise.pk)
    return ChapterPage(
        chapter=chapter,
        parts=parts,
        previous=open_before[-1] if open_before else None,
        next=open_after[0] if open_after else None,
        exercises=exercises,
        glossary=glossary_list_for_course(course=chapter.course),
    )


def chapter_get_for_preview(*, user, chapter_id: int) -> Chapter:
    """Any chapter, published or not, for staff; nobody else learns that it exists."""
    if not user_is_staff(user):
        raise Http404("No such chapter.")
    chapter = Chapter.objects.filter(pk=chapter_id).select_related("course").first()
    if chapter is None:
        raise Http404("No such chapter.")
    return chapter


# --- Quizzes and learners' progress --------------------------------------------------------------


def question_get_for_user(*, user, question_id: int) -> Question:
    """A quiz question in a chapter the user may open; anything else is answered as missing."""
    question = (
        Question.objects.select_related("chapter__course")
        .filter(pk=question_id, chapter__course__in=course_list_for_user(user=user).values("pk"))
        .first()
    )
    if question is None or not chapter_is_open_for_user(chapter=question.chapter, user=user):
        raise Http404("No such question.")
    course_check_admitted(course=question.chapter.course, user=user)
    return question


def chapter_get_by_id_for_user(*, user, chapter_id: int) -> Chapter:
    chapter = (
        Chapter.objects.select_related("course")
        .filter(pk=chapter_id, course__in=course_list_for_user(user=user).values("pk"))
        .first()
    )
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        raise Http404("No such chapter.")
    course_check_admitted(course=chapter.course, user=user)
    return chapter


@dataclass(frozen=True)
class ReviewItem:
    """One question at the end of a quiz: the right answer, its explanation, how the learner did."""

    question: Question
    right_choice: Choice | None
    first_choice: Choice | None
    tries: int

    @property
    def right_at_first_try(self) -> bool:
        return self.tries == 1


@dataclass(frozen=True)
class QuizState:
    """Where a learner stands in a chapter's quiz. Everything follows from their stored answers, so a
    learner who leaves mid-quiz comes back to the same question."""

    questions: list[Question]
    current: Question | None
    # The learner's latest answer to the current question when it was wrong: it stays marked and
    # its explanation shows until they try another choice.
    wrong_choice: Choice | None
    # The answer that moved the learner on to the current question (or to the end), if it was the
    # latest thing they did.
    just_right: Choice | None
    score: int
    review: list[ReviewItem]
    started: bool
    # The current question's choices in the order this learner sees them (choices_for_learner).
    current_choices: list[Choice]

    @property
    def total(self) -> int:
        return len(self.questions)

    @property
    def finished(self) -> bool:
        return bool(self.questions) and self.current is None

    @property
    def number(self) -> int:
        """k in "Question k of n"."""
        return self.questions.index(self.current) + 1 if self.current is not None else self.total


def quiz_state_for_learner(*, user, chapter: Chapter) -> QuizState:
    """The quiz as `user` sees it, in three queries (questions, choices, answers); two for visitors."""
    questions = list(chapter.questions.order_by("position").prefetch_related("choices"))
    answers = []
    if user and user.is_authenticated and questions:
        answers = list(
            QuizAnswer.objects.filter(user=user, question__chapter=chapter).order_by("question_id", "attempt")
        )
    choices = {choice.pk: choice for question in questions for choice in question.choices.all()}
    by_question: dict[int, list[QuizAnswer]] = {}
    for answer in answers:
        by_question.setdefault(answer.question_id, []).append(answer)

    current = next(
        (q for q in questions if not any(a.is_correct for a in by_question.get(q.pk, []))),
        None,
    )
    latest = max(answers, key=lambda a: a.answered_at, default=None)
    wrong_choice = just_right = None
    if latest is not None and not latest.is_correct and current is not None and latest.question_id == current.pk:
        wrong_choice = choices.get(latest.choice_id)
    elif latest is not None and latest.is_correct:
        just_right = choices.get(latest.choice_id)

    score = sum(1 for q in questions if any(a.attempt == 1 and a.is_correct for a in by_question.get(q.pk, [])))
    review = []
    if current is None:
        for question in questions:
            tried = by_question.get(question.pk, [])
            review.append(
                ReviewItem(
                    question=question,
                    right_choice=question.question_type.right_choice(list(question.choices.all())),
                    first_choice=choices.get(tried[0].choice_id) if tried else None,
                    tries=next((a.attempt for a in tried if a.is_correct), len(tried)),
                )
            )
    return QuizState(
        questions=questions,
        current=current,
        wrong_choice=wrong_choice,
        just_right=just_right,
        score=score,
        review=review,
        started=bool(answers),
        current_choices=choices_for_learner(question=current, user=user) if current is not None else [],
    )


def choices_for_learner(*, question: Question, user) -> list[Choice]:
    """A question's choices in the order one learner sees them: shuffled, so the right answer's
    place tells nothing, and the same for that learner on every visit (a digest of the learner and
    the choice, not a random draw), so a page that comes back keeps its order. Visitors share one
    order. Reads the question's choices as loaded (prefetched: no query)."""
    who = user.pk if user is not None and user.is_authenticated else 0
    return sorted(question.choices.all(), key=lambda choice: hashlib.sha256(f"{who}:{choice.pk}".encode()).digest())

"""Reads for courses, and the one place that says who may see what.

- Staff (admins) see everything, published or not: they author and preview.
- Instructors see published courses and every course they teach.
- Everyone else, anonymous visitors included, sees published courses and, inside them,
  published chapters only. An unpublished chapter is listed as "coming soon" but cannot be opened.

Anything a user may not see is answered as if it did not exist (404), never 403, so its
existence does not leak.
"""

from dataclasses import dataclass, field

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
from django.urls import reverse

from courses.models import (
    Chapter,
    ChapterProgress,
    Choice,
    Course,
    CourseModule,
    Enrolment,
    Exercise,
    ExerciseState,
    GlossaryTerm,
    Question,
    QuizAnswer,
)


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


def course_open_to_learner(*, course: Course, user) -> bool:
    """Whether the user may open the course's chapters and run its exercises. A course open to
    enrolment: anyone who sees it. One by invitation: learners enrolled in it (they joined one of its
    cohorts with the invite link, or an admin added them), its instructors and staff."""
    if course.enrolment == Course.EnrolmentPolicy.OPEN or course_drafts_visible_to(course=course, user=user):
        return True
    return bool(user and user.is_authenticated) and Enrolment.objects.filter(user=user, course=course).exists()


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


def course_modules_for_exercise(*, exercise: Exercise) -> tuple[tuple[str, str], ...]:
    """The (name, source) of every module of the exercise's course, by name: what a run of the
    exercise installs in its sandbox (RunRequest.modules)."""
    rows = CourseModule.objects.filter(course__chapters__exercises=exercise).order_by("name")
    return tuple(rows.values_list("name", "source"))


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
    """The rule of exercise_list_for_user for one exercise, checked on the row: one plain query for
    a published exercise (every press of Run asks), one more for a draft of a course one teaches."""
    try:
        exercise = Exercise.objects.select_related("chapter__course").get(pk=exercise_id)
    except (Exercise.DoesNotExist, ValueError, TypeError):
        raise Http404("No such exercise.") from None
    chapter, course = exercise.chapter, exercise.chapter.course
    if not (user and user.is_authenticated):
        raise Http404("No such exercise.")
    if not ((course.published and chapter.published) or course_drafts_visible_to(course=course, user=user)):
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
    return question


def chapter_get_by_id_for_user(*, user, chapter_id: int) -> Chapter:
    chapter = (
        Chapter.objects.select_related("course")
        .filter(pk=chapter_id, course__in=course_list_for_user(user=user).values("pk"))
        .first()
    )
    if chapter is None or not chapter_is_open_for_user(chapter=chapter, user=user):
        raise Http404("No such chapter.")
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
    )


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
    exercise_counts = {
        row["chapter"]: row
        for row in Exercise.objects.filter(chapter__course=course)
        .values("chapter")
        .annotate(
            total=Count("id", distinct=True),
            passed=Count("states", filter=Q(states__user=user, states__passed_at__isnull=False), distinct=True),
        )
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

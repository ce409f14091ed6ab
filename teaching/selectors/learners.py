"""One learner in a course, as their instructor sees them: chapters, quiz answers and runs."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from courses.models import (
    Chapter,
    ChapterProgress,
    Course,
    Enrolment,
    Exercise,
    ExerciseState,
    Hint,
    HintReveal,
    QuizAnswer,
)
from runner.models import Run

RUNS_PER_PAGE = 20


@dataclass(frozen=True)
class LearnerChapterRow:
    chapter: Chapter
    exercises_total: int
    exercises_passed: int
    quiz_finished_at: dt.datetime | None
    quiz_score: int | None
    completed_at: dt.datetime | None


@dataclass(frozen=True)
class LearnerExerciseRow:
    exercise: Exercise
    runs: int
    runs_to_pass: int | None  # runs up to and with the first that passed; None: none passed yet
    hints_revealed: int
    hints_total: int


@dataclass(frozen=True)
class LearnerDetail:
    course: Course
    learner: object  # the user model
    enrolment: Enrolment
    chapters: list[LearnerChapterRow]
    answers: list[QuizAnswer]
    exercises: list[LearnerExerciseRow]


def learner_detail(*, course: Course, learner) -> LearnerDetail:
    """One learner's chapters, quiz answers and exercises in the course (runs come page by page
    from learner_run_list). Four queries."""
    enrolment = Enrolment.objects.get(course=course, user=learner)
    progress = ChapterProgress.objects.filter(user=learner, chapter=OuterRef("pk"))
    # The learner's passes per chapter as a subquery on their own rows: a filtered count over the
    # join read every learner's exercise states (half a second at 100,000 learners).
    passed = (
        ExerciseState.objects.filter(user=learner, exercise__chapter=OuterRef("pk"), passed_at__isnull=False)
        .order_by()
        .values("exercise__chapter")
        .annotate(n=Count("id"))
        .values("n")
    )
    chapters = (
        Chapter.objects.filter(course=course)
        .only("id", "number", "slug", "title", "course_id")
        .annotate(
            exercises_total=Count("exercises", distinct=True),
            exercises_passed=Coalesce(Subquery(passed[:1]), 0),
            quiz_finished_at=Subquery(progress.values("quiz_finished_at")[:1]),
            quiz_score=Subquery(progress.values("quiz_score")[:1]),
            completed_at=Subquery(progress.values("completed_at")[:1]),
        )
        .order_by("number")
    )
    answers = list(
        QuizAnswer.objects.filter(user=learner, question__chapter__course=course)
        .select_related("question__chapter", "choice")
        .order_by("answered_at", "id")
    )
    return LearnerDetail(
        course=course,
        learner=learner,
        enrolment=enrolment,
        exercises=_exercise_rows(course=course, learner=learner),
        chapters=[
            LearnerChapterRow(
                chapter=c,
                exercises_total=c.exercises_total,
                exercises_passed=c.exercises_passed,
                quiz_finished_at=c.quiz_finished_at,
                quiz_score=c.quiz_score,
                completed_at=c.completed_at,
            )
            for c in chapters
        ],
        answers=answers,
    )


def _count(rows: QuerySet) -> Coalesce:
    return Coalesce(Subquery(rows.order_by().values("exercise").annotate(n=Count("pk")).values("n")[:1]), 0)


def _exercise_rows(*, course: Course, learner) -> list[LearnerExerciseRow]:
    """The exercises the learner ran or took hints for: runs, runs to the first pass and hints
    revealed beside each other, as subqueries on the learner's own rows (indexed by exercise and
    user)."""
    runs = Run.objects.filter(user=learner, exercise=OuterRef("pk"))
    first_pass = Run.objects.filter(user=learner, exercise=OuterRef(OuterRef("pk")), passed=True).order_by("created_at")
    exercises = (
        Exercise.objects.filter(chapter__course=course)
        .select_related("chapter")
        .only("id", "slug", "title", "position", "chapter__number", "chapter__title")
        .annotate(
            runs_count=_count(runs),
            passes=_count(runs.filter(passed=True)),
            upto_pass=_count(runs.filter(created_at__lte=Subquery(first_pass.values("created_at")[:1]))),
            hints_revealed=_count(HintReveal.objects.filter(user=learner, exercise=OuterRef("pk"))),
            hints_total=_count(Hint.objects.filter(exercise=OuterRef("pk"))),
        )
        .order_by("chapter__number", "position")
    )
    return [
        LearnerExerciseRow(
            exercise=e,
            runs=e.runs_count,
            runs_to_pass=e.upto_pass if e.passes else None,
            hints_revealed=e.hints_revealed,
            hints_total=e.hints_total,
        )
        for e in exercises
        if e.runs_count or e.hints_revealed
    ]


def learner_run_list(*, course: Course, learner) -> QuerySet[Run]:
    """Every run of the course's exercises by the learner, newest first (paginate it)."""
    return (
        Run.objects.filter(user=learner, exercise__chapter__course=course)
        .select_related("exercise__chapter")
        .order_by("-created_at", "id")
    )

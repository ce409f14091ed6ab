"""One learner in a course, as their instructor sees them: chapters, quiz answers and runs."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from courses.models import Chapter, ChapterProgress, Course, Enrolment, ExerciseState, QuizAnswer
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
class LearnerDetail:
    course: Course
    learner: object  # the user model
    enrolment: Enrolment
    chapters: list[LearnerChapterRow]
    answers: list[QuizAnswer]


def learner_detail(*, course: Course, learner) -> LearnerDetail:
    """One learner's chapters and quiz answers in the course (runs come page by page from
    learner_run_list). Three queries."""
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


def learner_run_list(*, course: Course, learner) -> QuerySet[Run]:
    """Every run of the course's exercises by the learner, newest first (paginate it)."""
    return (
        Run.objects.filter(user=learner, exercise__chapter__course=course)
        .select_related("exercise__chapter")
        .order_by("-created_at", "id")
    )

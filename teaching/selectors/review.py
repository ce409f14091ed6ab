"""The course dashboard's spaced review figures: questions due for review now, review answers given
and the share of them right ("retained").

Review answers are rows of their own (courses.ReviewAnswer), never quiz answers, so the quiz
figures (first tries, average tries) never count them, and these figures count nothing else. They
are read directly from the review tables in one query of three counts, each served by a course
index (ReviewCard's course and due, ReviewAnswer's course and time), for the learners the filters
count (enrolled, in the cohort, by the range's end): "due" is due now, whatever the range; answers
count when they were given in the range.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, QuerySet, Subquery
from django.db.models.functions import Coalesce

from courses.models import Course, ReviewAnswer, ReviewCard
from courses.services import review
from teaching.selectors.filters import DashboardFilters, learner_ids_of, rate_of


@dataclass(frozen=True)
class ReviewFigures:
    due: int  # questions due for review now, summed over the learners counted
    answers: int  # review answers given in the range
    right: int  # of which right

    @property
    def retained(self) -> float | None:
        """Right, of the review answers given: how much of what came back the learners still knew."""
        return rate_of(self.right, self.answers)


def _count(rows: QuerySet) -> Coalesce:
    grouped = rows.order_by().values("course_id").annotate(n=Count("id")).values("n")
    return Coalesce(Subquery(grouped, output_field=IntegerField()), 0)


def review_figures(*, course: Course, filters: DashboardFilters) -> ReviewFigures:
    """One query."""
    learners = learner_ids_of(course=course, filters=filters)
    due = ReviewCard.objects.filter(
        course=course, due__lte=review.now(), question__chapter__published=True, user_id__in=learners
    )
    answers = ReviewAnswer.objects.filter(filters.in_range("answered_at"), course=course, user_id__in=learners)
    row = (
        Course.objects.filter(pk=course.pk)
        .values(due=_count(due), answers=_count(answers), right=_count(answers.filter(is_correct=True)))
        .get()
    )
    return ReviewFigures(due=row["due"], answers=row["answers"], right=row["right"])

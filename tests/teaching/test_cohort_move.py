"""Cohorts moved from courses to teaching (teaching/migrations/0009_cohorts): a database made before
the move keeps its cohorts and their members, and the counts' cohort keys still check against them.
It starts before teaching's 0006, whose fill runs the live rebuild through the moved models."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from courses.models import Chapter
from teaching.models import ChapterCount, Cohort

BEFORE = [("courses", "0008_question_kind"), ("teaching", "0005_choice_day_counts")]


def _migrate(targets=None):
    """Migrate to `targets` (all the way without), and give the models as they stand there."""
    executor = MigrationExecutor(connection)
    targets = targets or executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_the_cohorts_and_their_members():
    old = _migrate(BEFORE)
    try:
        ann = old.get_model("accounts", "User").objects.create(username="ann", password="-")
        course = old.get_model("courses", "Course").objects.create(slug="c", title="C")
        old.get_model("courses", "Chapter").objects.create(course=course, number=1, slug="one", title="One")
        old.get_model("courses", "Enrolment").objects.create(user=ann, course=course)
        cohort = old.get_model("courses", "Cohort").objects.create(course=course, name="Morning", invite_code="m-1")
        old.get_model("courses", "CohortMembership").objects.create(cohort=cohort, user=ann)
    finally:
        _migrate()

    moved = Cohort.objects.get(invite_code="m-1")
    assert (moved.pk, moved.name, moved.course_id) == (cohort.pk, "Morning", course.pk)
    assert list(moved.members.values_list("username", flat=True)) == ["ann"]
    chapter = Chapter.objects.get(course_id=course.pk)
    ChapterCount.objects.create(chapter=chapter, course_id=course.pk, cohort=moved)
    with pytest.raises(IntegrityError), transaction.atomic():
        ChapterCount.objects.create(chapter=chapter, course_id=course.pk, cohort_id=moved.pk + 1)

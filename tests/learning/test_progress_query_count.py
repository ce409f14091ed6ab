"""The catalog and the course page cost a fixed number of queries for a learner with progress,
whatever the number of courses, parts and answers."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.services.progress import exercise_record_pass
from courses.services.quizzes import quiz_answer
from tests.frontend.conftest import course_build
from tests.learning.conftest import quiz_add, right

pytestmark = pytest.mark.django_db


def _progress_in(course, user):
    for chapter in course.chapters.filter(published=True):
        for question in quiz_add(chapter=chapter):
            quiz_answer(user=user, question=question, choice=right(question))
        for exercise in chapter.exercises.all():
            exercise_record_pass(user=user, exercise=exercise)


def _queries(client, url) -> int:
    client.get(url)  # the first visit enrols; measure the steady state
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_it_pins_the_catalog_for_a_learner_with_progress(client, learner, django_assert_num_queries, clock):
    client.force_login(learner)
    first = course_build(slug="first")
    _progress_in(first, learner)
    client.get(reverse("frontend:course", args=[first.slug]))
    clock.move(days=3)  # every question answered is due for review
    # session, user; the catalog; enrolments with their last part, published parts and complete
    # parts per course; questions due for review per course.
    with django_assert_num_queries(7):
        page = client.get(reverse("frontend:catalog")).content.decode()
    assert "2 of 2 parts complete" in page and "10 questions due for review" in page

    for slug in ("second", "third"):
        more = course_build(slug=slug)
        _progress_in(more, learner)
        client.get(reverse("frontend:course", args=[slug]))
    clock.move(days=3)
    with django_assert_num_queries(7):
        page = client.get(reverse("frontend:catalog")).content.decode()
    assert page.count("2 of 2 parts complete") == 3 and page.count("10 questions due for review") == 3


def test_it_pins_the_course_page_for_a_learner_with_progress(client, learner, django_assert_num_queries):
    client.force_login(learner)
    small = course_build(slug="small")
    _progress_in(small, learner)
    url = reverse("frontend:course", args=[small.slug])
    client.get(url)
    # session, user; course; whether they teach it; the outline; enrolment, part progress,
    # exercises passed per part; the visit noted; the questions due for review.
    with django_assert_num_queries(10):
        page = client.get(url).content.decode()
    assert "2 of 2 parts complete" in page

    large = course_build(slug="large")
    for chapter in large.chapters.all():
        chapter.published = True
        chapter.save()
    _progress_in(large, learner)
    url = reverse("frontend:course", args=[large.slug])
    client.get(url)
    with django_assert_num_queries(10):
        page = client.get(url).content.decode()
    assert "10 of 10 parts complete" in page


def test_it_costs_a_learner_the_same_on_a_chapter_page_however_far_they_are_in_the_quiz(client, learner):
    course = course_build(slug="quiz")
    chapter = course.chapters.get(number=2)
    questions = quiz_add(chapter=chapter)
    client.force_login(learner)
    url = reverse("frontend:chapter", args=[course.slug, chapter.slug])
    before = _queries(client, url)
    for question in questions:
        quiz_answer(user=learner, question=question, choice=right(question))
    assert _queries(client, url) == before


def test_a_learners_outline_and_runs_count_their_own_passes_only(client, learner, make_user):
    """What the outline shows, and the parts a run counts as passed, are this learner's alone:
    another learner who passed everything changes neither (both read the learner's own states)."""
    from courses.selectors_own import parts_passed

    course = course_build(slug="own-passes")
    other = make_user()
    for exercise in course.chapters.get(number=2).exercises.all():
        exercise_record_pass(user=other, exercise=exercise)
    first = course.chapters.get(number=2).exercises.order_by("position").first()
    exercise_record_pass(user=learner, exercise=first)
    count = course.chapters.get(number=2).exercises.count()

    client.force_login(learner)
    page = client.get(reverse("frontend:course", args=[course.slug])).content.decode()
    assert f"1 of {count} exercises passed" in page
    assert parts_passed(user=learner, course_id=course.pk) == {1, 3, 5, 6, 7, 8, 9, 10}  # parts with no exercise
    assert 2 in parts_passed(user=other, course_id=course.pk)

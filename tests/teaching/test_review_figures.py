"""The course dashboard's spaced review figures (due now, review answers, retained) on the
hand-built course (tests/teaching/conftest.py), on the page and in the API, for the filters' learners;
and review answers never reach the quiz figures.

q1 joins the review of ann (right at her first try: back in days), bob and cat (missed: back in 12
hours), and of the outsider, who is not enrolled and never counted. 13 hours later bob and cat are
due; bob answers right, cat wrong, the outsider wrong."""

import pytest
from rest_framework.test import APIClient

from courses.models import ReviewAnswer
from courses.services import review

pytestmark = pytest.mark.django_db


def _board(client, query: str = "") -> dict:
    response = client.get(f"/api/teach/courses/hand/dashboard/{query}")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def api(hand_course):
    client = APIClient()
    client.force_authenticate(hand_course.teacher)
    return client


@pytest.fixture
def scheduled(hand_course, clock):
    made = hand_course
    for user, right in ((made.ann, True), (made.bob, False), (made.cat, False), (made.outsider, False)):
        review.review_schedule_first_answer(user=user, question=made.q1, is_correct=right)
    clock.move(hours=13)
    return made


def test_it_counts_questions_due_and_review_answers_with_what_was_retained(api, scheduled, client):
    made = scheduled
    before = _board(api)
    assert before["review"] == {"due": 2, "answers": 0, "right": 0, "retained": None}

    a, b = made.q1.choices.get(text="A"), made.q1.choices.get(text="B")
    review.review_answer(user=made.bob, question=made.q1, choice=a)
    review.review_answer(user=made.cat, question=made.q1, choice=b)
    review.review_answer(user=made.outsider, question=made.q1, choice=b)
    after = _board(api)
    assert after["review"] == {"due": 0, "answers": 2, "right": 1, "retained": 0.5}
    # The quiz figures are the first tries as they were.
    assert after["questions"] == before["questions"]
    assert (after["questions"][0]["first_tries"], after["questions"][0]["answers"]) == (3, 6)

    client.force_login(made.teacher)
    page = client.get("/teach/hand/").content.decode()
    assert 'data-stat="review-due">0<' in page and 'data-stat="review-answers">2<' in page
    assert 'data-stat="review-retained">50%<' in page and "(1/2)" in page


def test_it_counts_the_cohorts_learners_and_the_ranges_answers(api, scheduled):
    made = scheduled
    assert _board(api, f"?cohort={made.morning.pk}")["review"]["due"] == 1  # bob, not cat
    review.review_answer(user=made.bob, question=made.q1, choice=made.q1.choices.get(text="A"))
    review.review_answer(user=made.cat, question=made.q1, choice=made.q1.choices.get(text="B"))
    morning = _board(api, f"?cohort={made.morning.pk}")["review"]
    assert morning == {"due": 0, "answers": 1, "right": 1, "retained": 1.0}

    day = ReviewAnswer.objects.first().answered_at.date()
    assert _board(api, f"?start={day}&end={day}")["review"]["answers"] == 2
    earlier = day.replace(year=day.year - 1)
    assert _board(api, f"?start={earlier}&end={earlier}")["review"]["answers"] == 0

"""Who may open each dashboard page and endpoint: anonymous visitors log in (pages) or are refused
(API); learners and instructors of another course get 404; the course's instructor and admins see it."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PAGES = [
    "/teach/hand/",
    "/teach/hand/learners/{ann}/",
    "/teach/hand/export/learners.csv",
    "/teach/hand/export/questions.csv",
]
ENDPOINTS = ["/api/teach/courses/hand/dashboard/", "/api/teach/courses/hand/learners/{ann}/"]
EXPECTED = {"learner": 404, "other_teacher": 404, "teacher": 200, "admin": 200}


def _who(hand, name):
    return {"learner": hand.ann, "other_teacher": hand.other_teacher, "teacher": hand.teacher, "admin": hand.admin}[
        name
    ]


@pytest.mark.parametrize("page", PAGES)
def test_it_sends_anonymous_visitors_to_log_in(hand_course, client, page):
    url = page.format(ann=hand_course.ann.pk)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("who", EXPECTED)
def test_it_shows_dashboard_pages_only_to_the_course_instructor_and_admins(hand_course, client, page, who):
    client.force_login(_who(hand_course, who))
    response = client.get(page.format(ann=hand_course.ann.pk))
    assert response.status_code == EXPECTED[who]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_it_refuses_anonymous_api_calls(hand_course, endpoint):
    response = APIClient().get(endpoint.format(ann=hand_course.ann.pk))
    assert response.status_code in (401, 403)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("who", EXPECTED)
def test_it_answers_dashboard_endpoints_only_for_the_course_instructor_and_admins(hand_course, endpoint, who):
    api = APIClient()
    api.force_authenticate(_who(hand_course, who))
    response = api.get(endpoint.format(ann=hand_course.ann.pk))
    assert response.status_code == EXPECTED[who]


def test_it_lists_only_the_courses_an_instructor_teaches(hand_course, client):
    client.force_login(hand_course.teacher)
    page = client.get("/teach/").content.decode()
    assert "Hand-built course" in page and "Another course" not in page
    client.force_login(hand_course.admin)
    page = client.get("/teach/").content.decode()
    assert "Hand-built course" in page and "Another course" in page


def test_it_hides_the_teaching_landing_from_learners(hand_course, client):
    assert client.get("/teach/").status_code == 302
    client.force_login(hand_course.ann)
    assert client.get("/teach/").status_code == 404


def test_it_answers_404_for_someone_not_enrolled_in_the_course(hand_course, client):
    client.force_login(hand_course.teacher)
    assert client.get(f"/teach/hand/learners/{hand_course.outsider.pk}/").status_code == 404
    api = APIClient()
    api.force_authenticate(hand_course.teacher)
    assert api.get(f"/api/teach/courses/hand/learners/{hand_course.outsider.pk}/").status_code == 404


def test_it_lets_only_teachers_create_cohorts(hand_course, client):
    client.force_login(hand_course.other_teacher)
    assert client.post("/teach/hand/cohorts/", {"name": "Sneaky"}).status_code == 404
    client.force_login(hand_course.teacher)
    assert client.post("/teach/hand/cohorts/", {"name": "Evening"}).status_code == 302
    assert hand_course.course.cohorts.filter(name="Evening", created_by=hand_course.teacher).exists()

"""The dashboard pages, CSV exports and API on the hand-built course (tests/teaching/conftest.py)."""

import csv
import io

import pytest
from rest_framework.test import APIClient

from runner.models import Run

pytestmark = pytest.mark.django_db


def _csv(response) -> list[list[str]]:
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_it_exports_each_learners_progress_for_the_current_filters(hand_course, client):
    client.force_login(hand_course.teacher)
    header, *rows = _csv(client.get("/teach/hand/export/learners.csv"))
    assert header[:2] == ["learner_id", "username"]
    by_name = {row[1]: dict(zip(header, row, strict=True)) for row in rows}
    assert sorted(by_name) == ["ann", "bob", "cat", "dan"]
    assert (by_name["ann"]["chapters_completed"], by_name["ann"]["exercises_passed"]) == ("2", "2")
    assert (by_name["bob"]["quiz_answers"], by_name["bob"]["quiz_first_try_right"]) == ("3", "0")
    assert (by_name["cat"]["runs"], by_name["cat"]["runs_not_passed"]) == ("3", "3")
    header, *rows = _csv(client.get(f"/teach/hand/export/learners.csv?cohort={hand_course.morning.pk}"))
    assert sorted(row[1] for row in rows) == ["ann", "bob"]


def test_it_exports_question_statistics(hand_course, client):
    client.force_login(hand_course.teacher)
    response = client.get("/teach/hand/export/questions.csv")
    assert 'filename="hand-questions.csv"' in response["Content-Disposition"]
    header, row = _csv(response)
    data = dict(zip(header, row, strict=True))
    assert data["prompt"] == "Which is right?"
    assert (data["first_tries"], data["first_try_right"], data["first_try_rate"]) == ("3", "1", "0.3333")
    assert (data["average_attempts"], data["most_chosen_wrong_answer"], data["most_chosen_wrong_count"]) == (
        "2.0",
        "B",
        "2",
    )


def test_it_shows_the_dashboard_with_charts_data_and_tables(hand_course, client):
    client.force_login(hand_course.teacher)
    response = client.get("/teach/hand/")
    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="dashboard-data"' in page and 'data-chart="funnel"' in page
    assert response.context["board"].enrolled == 4
    assert "NameError" in page and "cat" in page and "Morning" in page


def test_it_applies_filters_from_the_query_string_and_refuses_bad_ones(hand_course, client):
    client.force_login(hand_course.teacher)
    response = client.get(f"/teach/hand/?cohort={hand_course.morning.pk}")
    assert response.context["board"].enrolled == 2
    response = client.get("/teach/hand/?start=not-a-date")
    assert response.status_code == 400 and "YYYY-MM-DD" in response.content.decode()


def test_it_shows_one_learners_answers_and_runs_page_by_page(hand_course, client, settings):
    client.force_login(hand_course.teacher)
    page = client.get(f"/teach/hand/learners/{hand_course.bob.pk}/").content.decode()
    assert "Which is right?" in page and "Timed out" in page and "time limit 20 s" in page
    assert "ValueError: boom" in page and "print(1)" in page


def test_the_learner_page_says_what_went_wrong_in_each_run(hand_course, client):
    run = Run.objects.filter(user=hand_course.bob, passed=False).first()
    Run.objects.filter(pk=run.pk).update(failure="AssertionError: the weights must sum to 1")
    client.force_login(hand_course.teacher)
    page = client.get(f"/teach/hand/learners/{hand_course.bob.pk}/").content.decode()
    assert "AssertionError: the weights must sum to 1" in page


def test_it_serves_the_dashboard_and_a_learner_from_the_api(hand_course):
    api = APIClient()
    api.force_authenticate(hand_course.teacher)
    data = api.get(f"/api/teach/courses/hand/dashboard/?cohort={hand_course.morning.pk}").json()
    assert (data["enrolled"], data["filters"]["cohort"]) == (2, hand_course.morning.pk)
    full = api.get("/api/teach/courses/hand/dashboard/").json()
    (question,) = full["questions"]
    assert (question["first_try_rate"], question["average_attempts"], question["top_wrong_choice"]) == (
        0.3333,
        2.0,
        "B",
    )
    e1 = full["exercises"][0]
    assert (e1["pass_rate"], e1["median_runs_to_pass"], e1["error_types"][0]) == (
        0.6667,
        3.0,
        {"name": "NameError", "count": 4},
    )
    assert [s["username"] for s in full["stuck"]] == ["cat", "dan"]
    assert api.get("/api/teach/courses/hand/dashboard/?start=nope").status_code == 400
    learner = api.get(f"/api/teach/courses/hand/learners/{hand_course.bob.pk}/").json()
    assert (learner["username"], learner["run_count"], len(learner["answers"])) == ("bob", 4, 3)
    assert learner["runs"][0]["status"] == "succeeded"


def test_it_puts_the_dashboard_endpoints_in_the_openapi_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/teach/courses/{course_slug}/dashboard/" in schema
    assert "/api/teach/courses/{course_slug}/learners/{learner_id}/" in schema

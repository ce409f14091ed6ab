"""GET /api/courses/<id>/review/ and POST /api/review/answers/: the Review page's rules over JSON,
and only ever the learner's own review."""

import re

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from courses.models import Course, ReviewAnswer, ReviewCard
from courses.services.quizzes import quiz_answer
from tests.learning.conftest import questions_of, right, wrong

pytestmark = pytest.mark.django_db


def _client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _state(client, course) -> dict:
    response = client.get(f"/api/courses/{course.pk}/review/")
    assert response.status_code == 200, response.content
    return response.json()


def _answer(client, question, choice):
    return client.post("/api/review/answers/", {"question": question.pk, "choice": choice.pk}, format="json")


@pytest.fixture
def missed(learner, course, clock):
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    quiz_answer(user=learner, question=q1, choice=right(q1))
    return q1


def test_it_gives_the_due_count_and_the_next_question_without_its_answer(learner, course, missed, clock):
    api = _client(learner)
    state = _state(api, course)
    assert (state["due"], state["scheduled"], state["question"]) == (0, 1, None)
    assert state["next_due_at"] is not None

    clock.move(hours=13)
    state = _state(api, course)
    assert (state["due"], state["course"]) == (1, course.pk)
    question = state["question"]
    assert (question["id"], question["prompt"], question["part"], question["kind"]) == (
        missed.pk,
        missed.prompt,
        2,
        "single-choice",
    )
    ids = [c["id"] for c in question["choices"]]
    assert sorted(ids) == sorted(missed.choices.values_list("pk", flat=True))
    assert all(set(c) == {"id", "text"} for c in question["choices"])
    # In the order the Review page shows them to this learner.
    client = Client()
    client.force_login(learner)
    page = client.get(reverse("frontend:review", args=[course.slug])).content.decode()
    assert [int(pk) for pk in re.findall(r'name="choice" value="(\d+)"', page)] == ids


def test_it_takes_an_answer_explains_it_and_says_when_the_question_comes_back(learner, course, missed, clock):
    api = _client(learner)
    clock.move(hours=13)
    response = _answer(api, missed, wrong(missed))
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["is_correct"], body["recorded"], body["explanation"], body["due"]) == (
        False,
        True,
        wrong(missed).explanation,
        0,
    )
    assert body["right_choice"] == {
        "id": right(missed).pk,
        "text": right(missed).text,
        "explanation": right(missed).explanation,
    }
    assert body["next_due_at"] == _state(api, course)["next_due_at"]

    replay = _answer(api, missed, wrong(missed))
    assert replay.status_code == 200 and replay.json()["recorded"] is False
    early = _answer(api, missed, right(missed))
    assert early.status_code == 409 and "not due for review until" in early.json()["detail"]
    assert ReviewAnswer.objects.count() == 1


def test_it_refuses_bad_input_with_a_reason(learner, course, missed, clock):
    api = _client(learner)
    clock.move(hours=13)
    q2 = questions_of(course, 2)[1]
    mismatch = _answer(api, missed, right(q2))
    assert mismatch.status_code == 400 and mismatch.json()["detail"] == "That choice belongs to another question."
    no_choice = api.post("/api/review/answers/", {"question": missed.pk, "choice": 999999}, format="json")
    assert no_choice.status_code == 400 and no_choice.json()["choice"] == ["No such choice."]
    assert api.post("/api/review/answers/", {"question": missed.pk}, format="json").status_code == 400
    unscheduled = _answer(api, q2, right(q2))
    assert unscheduled.status_code == 409 and "not in your review" in unscheduled.json()["detail"]
    assert not ReviewAnswer.objects.exists()


def test_another_learner_neither_sees_nor_answers_a_learners_review(learner, make_user, course, missed, clock):
    clock.move(hours=13)
    other = _client(make_user())
    state = _state(other, course)
    assert (state["due"], state["scheduled"], state["question"], state["next_due_at"]) == (0, 0, None, None)
    refused = _answer(other, missed, right(missed))
    assert refused.status_code == 409 and "not in your review" in refused.json()["detail"]
    assert not ReviewAnswer.objects.exists()
    # The owner's card is untouched: still due for them.
    assert _state(_client(learner), course)["question"]["id"] == missed.pk


def test_it_refuses_visitors_and_hides_what_the_learner_may_not_see(learner, course, missed, clock):
    visitor = _client()
    assert visitor.get(f"/api/courses/{course.pk}/review/").status_code in (401, 403)
    assert _answer(visitor, missed, right(missed)).status_code in (401, 403)

    api = _client(learner)
    draft = Course.objects.create(slug="draft", title="A draft", published=False)
    assert api.get(f"/api/courses/{draft.pk}/review/").status_code == 404
    assert api.get("/api/courses/999999/review/").status_code == 404
    hidden = questions_of(course, 3)[0]  # a part not yet published
    response = _answer(api, hidden, right(hidden))
    assert response.status_code == 404 and "detail" in response.json()
    unknown = api.post("/api/review/answers/", {"question": 999999, "choice": right(hidden).pk}, format="json")
    assert unknown.status_code == 404
    closed = Course.objects.create(
        slug="closed", title="By invitation", published=True, enrolment=Course.EnrolmentPolicy.INVITE
    )
    refused = api.get(f"/api/courses/{closed.pk}/review/")
    assert refused.status_code == 403 and "invitation" in refused.json()["detail"]


def test_a_card_the_scheduler_cannot_read_is_no_500(learner, course, missed, clock, caplog):
    # Written directly: the Review state without the stability it needs.
    ReviewCard.objects.filter(question=missed).update(state=2, step=None, stability=None)
    clock.move(days=5)
    api = _client(learner)
    state = _state(api, course)
    assert state["question"] is None
    refused = _answer(api, missed, right(missed))
    assert refused.status_code == 409 and "cannot be read" in refused.json()["detail"]
    assert any("skipped" in record.getMessage() for record in caplog.records)


def test_the_schema_describes_the_review_operations_without_a_warning(learner, tmp_path):
    schema = _client(learner).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "get" in schema["paths"]["/api/courses/{course_id}/review/"]
    post = schema["paths"]["/api/review/answers/"]["post"]
    assert {"201", "400", "404", "409"} <= set(post["responses"])
    # drf-spectacular raises on any warning (a clashing component name, a field it cannot type).
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))

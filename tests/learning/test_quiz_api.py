"""GET /api/chapters/<id>/quiz/ and POST /api/quiz/answers/: the quiz rules over JSON."""

import pytest
from rest_framework.test import APIClient

from courses.models import QuizAnswer
from tests.learning.conftest import questions_of, right, wrong

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(learner):
    client = APIClient()
    client.force_authenticate(learner)
    return client


def _state(api, chapter):
    response = api.get(f"/api/chapters/{chapter.pk}/quiz/")
    assert response.status_code == 200, response.content
    return response.json()


def test_it_gives_the_current_question_without_saying_which_choice_is_right(api, course, part_2):
    q1 = questions_of(course, 2)[0]
    state = _state(api, part_2)
    assert (state["number"], state["total"], state["finished"]) == (1, 5, False)
    assert state["current"]["id"] == q1.pk and state["current"]["prompt"] == q1.prompt
    assert sorted(c["id"] for c in state["current"]["choices"]) == [c.pk for c in q1.choices.order_by("position")]
    assert all(set(c) == {"id", "text"} for c in state["current"]["choices"])
    assert state["review"] == [] and state["wrong_choice"] is None


def test_it_takes_answers_explains_wrong_ones_and_ends_with_the_review(api, course, part_2):
    questions = questions_of(course, 2)
    q1 = questions[0]
    response = api.post("/api/quiz/answers/", {"question": q1.pk, "choice": wrong(q1).pk}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["is_correct"], body["attempt"], body["explanation"]) == (False, 1, wrong(q1).explanation)
    assert _state(api, part_2)["wrong_choice"]["explanation"] == wrong(q1).explanation
    for question in questions:
        body = api.post("/api/quiz/answers/", {"question": question.pk, "choice": right(question).pk}).json()
    assert body["quiz_finished"] and body["score"] == 4
    state = _state(api, part_2)
    assert state["finished"] and state["score"] == 4 and state["current"] is None
    assert [item["right_choice"]["id"] for item in state["review"]] == [right(q).pk for q in questions]
    assert [item["right_at_first_try"] for item in state["review"]] == [False, True, True, True, True]


def test_it_answers_a_repeated_answer_200_and_stores_it_once(api, course):
    q1 = questions_of(course, 2)[0]
    payload = {"question": q1.pk, "choice": right(q1).pk}
    assert api.post("/api/quiz/answers/", payload).status_code == 201
    replay = api.post("/api/quiz/answers/", payload)
    assert replay.status_code == 200 and replay.json()["recorded"] is False
    assert QuizAnswer.objects.count() == 1


def test_it_refuses_mismatched_choices_questions_out_of_turn_and_hidden_chapters(api, course):
    q1, q2, *_ = questions_of(course, 2)
    mismatch = api.post("/api/quiz/answers/", {"question": q1.pk, "choice": right(q2).pk})
    assert mismatch.status_code == 400 and "another question" in mismatch.json()["detail"]
    out_of_turn = api.post("/api/quiz/answers/", {"question": q2.pk, "choice": right(q2).pk})
    assert out_of_turn.status_code == 400 and "order" in out_of_turn.json()["detail"]
    assert api.post("/api/quiz/answers/", {"question": q1.pk, "choice": 999999}).status_code == 400
    assert api.post("/api/quiz/answers/", {"question": q1.pk}).status_code == 400
    hidden = questions_of(course, 3)[0]
    assert api.post("/api/quiz/answers/", {"question": hidden.pk, "choice": right(hidden).pk}).status_code == 404
    assert api.get(f"/api/chapters/{hidden.chapter_id}/quiz/").status_code == 404
    assert api.post("/api/quiz/answers/", {"question": 999999, "choice": right(q1).pk}).status_code == 404
    assert not QuizAnswer.objects.exists()


def test_it_refuses_visitors(course, part_2):
    client = APIClient()
    q1 = questions_of(course, 2)[0]
    assert client.get(f"/api/chapters/{part_2.pk}/quiz/").status_code in (401, 403)
    assert client.post("/api/quiz/answers/", {"question": q1.pk, "choice": right(q1).pk}).status_code in (401, 403)


def test_it_describes_both_operations_in_the_openapi_schema(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    assert "get" in schema["paths"]["/api/chapters/{chapter_id}/quiz/"]
    assert "post" in schema["paths"]["/api/quiz/answers/"]


def test_each_learner_sees_the_choices_in_an_order_of_their_own_that_stays(api, course, part_2, make_user):
    """The right answer's place tells nothing: the order is the learner's own, and the same on
    every visit, in the API as on the page."""
    from courses.models import Question
    from courses.selectors import choices_for_learner

    other = APIClient()
    other.force_authenticate(make_user())
    mine = [c["id"] for c in _state(api, part_2)["current"]["choices"]]
    assert [c["id"] for c in _state(api, part_2)["current"]["choices"]] == mine
    questions = list(Question.objects.filter(chapter__course=course).prefetch_related("choices"))
    users = [api.handler._force_user, other.handler._force_user]
    orders = [[[c.pk for c in choices_for_learner(question=q, user=u)] for q in questions] for u in users]
    assert orders[0] != orders[1]  # two learners, two orders (over all the course's questions)
    right_first = sum(order[0] == right(q).pk for order, q in zip(orders[0], questions, strict=True))
    assert right_first < len(questions) / 2  # the right answer is not kept in one place

"""GET/PUT /api/exercises/<id>/code/: a learner's own saved code, the starter code until then,
never another learner's, and a clear 400 for code the server will not keep."""

import pytest
from rest_framework.test import APIClient

from courses.models import Chapter, Course, Exercise, ExerciseState
from courses.services.progress import exercise_code_save, exercise_record_pass

pytestmark = pytest.mark.django_db

STARTER = "import torch\n\nprint(torch.ones(2))\n"


@pytest.fixture
def exercise():
    course = Course.objects.create(slug="code-api", title="Code API", published=True)
    chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
    return Exercise.objects.create(chapter=chapter, slug="ones", title="Ones", starter_code=STARTER)


def _client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _url(exercise: Exercise) -> str:
    return f"/api/exercises/{exercise.pk}/code/"


def test_it_answers_the_starter_code_before_the_learner_saves_any(exercise, learner):
    body = _client(learner).get(_url(exercise)).json()
    assert body == {
        "exercise": exercise.pk,
        "code": STARTER,
        "saved": False,
        "saved_at": None,
        "passed": False,
        "passed_at": None,
    }


def test_it_saves_the_code_and_answers_it_back(exercise, learner):
    client = _client(learner)
    code = "\nprint('mine')  \n"  # leading newline and trailing spaces are kept as typed
    response = client.put(_url(exercise), {"code": code}, format="json")
    assert response.status_code == 200
    assert response.json()["code"] == code and response.json()["saved"] is True
    assert client.get(_url(exercise)).json()["code"] == code
    assert ExerciseState.objects.get(user=learner, exercise=exercise).code == code


def test_it_saves_empty_code_as_the_learners_choice(exercise, learner):
    client = _client(learner)
    client.put(_url(exercise), {"code": ""}, format="json")
    body = client.get(_url(exercise)).json()
    assert body["code"] == "" and body["saved"] is True


def test_it_never_answers_another_learners_code(exercise, make_user):
    alice, bob = make_user(), make_user()
    exercise_code_save(user=alice, exercise=exercise, code="print('alice')")
    exercise_record_pass(user=alice, exercise=exercise)
    body = _client(bob).get(_url(exercise)).json()
    assert body["code"] == STARTER and body["saved"] is False and body["passed"] is False
    _client(bob).put(_url(exercise), {"code": "print('bob')"}, format="json")
    assert _client(alice).get(_url(exercise)).json()["code"] == "print('alice')"


def test_it_says_when_the_check_has_passed(exercise, learner):
    exercise_record_pass(user=learner, exercise=exercise)
    body = _client(learner).get(_url(exercise)).json()
    assert body["passed"] is True and body["passed_at"] is not None
    assert body["code"] == STARTER  # a pass alone saves no code


def test_it_answers_404_for_a_hidden_exercise(exercise, learner):
    exercise.chapter.published = False
    exercise.chapter.save()
    client = _client(learner)
    assert client.get(_url(exercise)).status_code == 404
    assert client.put(_url(exercise), {"code": "x"}, format="json").status_code == 404
    assert not ExerciseState.objects.exists()


def test_it_answers_404_for_an_unknown_exercise(learner):
    assert _client(learner).get("/api/exercises/999999/code/").status_code == 404


def test_it_refuses_code_over_64_kib_and_keeps_the_saved_code(exercise, learner):
    client = _client(learner)
    client.put(_url(exercise), {"code": "print('kept')"}, format="json")
    response = client.put(_url(exercise), {"code": "#" * (64 * 1024 + 1)}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == "Code is 65537 bytes; the limit is 65536 bytes."  # as a run says
    assert client.get(_url(exercise)).json()["code"] == "print('kept')"


def test_it_refuses_a_body_without_code(exercise, learner):
    response = _client(learner).put(_url(exercise), {}, format="json")
    assert response.status_code == 400
    assert "code" in response.json()


def test_it_refuses_anonymous_visitors(exercise):
    client = _client()
    assert client.get(_url(exercise)).status_code in (401, 403)
    assert client.put(_url(exercise), {"code": "x"}, format="json").status_code in (401, 403)


def test_it_requires_the_csrf_token_for_a_browser_session(exercise, learner):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(learner)
    assert client.put(_url(exercise), {"code": "x"}, format="json").status_code == 403


def test_a_save_from_a_stale_version_is_a_conflict_that_carries_the_other_code(exercise, learner):
    """Two tabs opened on the starter code: the second to save is told, and shown the first's code,
    rather than overwriting an edit it never saw; saving again from that version goes through."""
    client = _client(learner)
    first = client.put(_url(exercise), {"code": "print('tab one')\n", "base": None}, format="json")
    assert first.status_code == 200
    second = client.put(_url(exercise), {"code": "print('tab two')\n", "base": None}, format="json")
    assert second.status_code == 409
    assert second.json()["code"] == "print('tab one')\n" and second.json()["saved_at"] == first.json()["saved_at"]
    assert ExerciseState.objects.get(user=learner, exercise=exercise).code == "print('tab one')\n"
    mine = client.put(_url(exercise), {"code": "print('tab two')\n", "base": first.json()["saved_at"]}, format="json")
    assert mine.status_code == 200 and mine.json()["code"] == "print('tab two')\n"
    # The same code from a stale version is no conflict; without a base, the last save wins.
    same = client.put(_url(exercise), {"code": "print('tab two')\n", "base": None}, format="json")
    assert same.status_code == 200
    assert client.put(_url(exercise), {"code": "print('api')\n"}, format="json").status_code == 200
    assert client.put(_url(exercise), {"code": "x", "base": "not a time"}, format="json").status_code == 400

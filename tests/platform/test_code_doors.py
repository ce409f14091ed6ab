"""Every door that takes a learner's code (a run, a save) keeps one rule (ecplatform/code.py): the
same answer, in the same words, for code that is not text or is too long, and nothing written."""

import json

import pytest
from rest_framework.test import APIClient

from courses.models import ExerciseState
from runner.models import Run

pytestmark = pytest.mark.django_db

LIMIT = 2048


@pytest.fixture
def client(learner, settings):
    settings.RUNNER_MAX_CODE_BYTES = LIMIT
    client = APIClient()
    client.force_authenticate(learner)
    return client


def _run(client, exercise, body: str):
    return client.post("/api/runs/", body, content_type="application/json")


def _save(client, exercise, body: str):
    return client.put(f"/api/exercises/{exercise.pk}/code/", body, content_type="application/json")


DOORS = {"run": _run, "save": _save}


def _body(exercise, code: str) -> str:
    # json.dumps escapes a lone surrogate as \\udXXX, as a client's JSON encoder would send it.
    return json.dumps({"exercise": exercise.pk, "code": code})


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("print('a')\x00", "Code contains a NUL character."),
        ("x = '\ud800'", "Code contains U+D800, half of a character, which is not text."),
        # 683 three-byte characters: 2049 bytes of UTF-8, though 683 characters.
        ("€" * 683, f"Code is 2049 bytes; the limit is {LIMIT} bytes."),
    ],
    ids=["nul", "lone-surrogate", "over-by-bytes"],
)
def test_each_door_refuses_code_that_breaks_the_rule_in_the_same_words(client, exercise, learner, door, code, says):
    response = DOORS[door](client, exercise, _body(exercise, code))

    assert response.status_code == 400, response.content
    assert response.json()["detail"] == says
    assert not Run.objects.filter(user=learner).exists()
    assert not ExerciseState.objects.filter(user=learner, code_saved_at__isnull=False).exists()


@pytest.mark.parametrize("door", DOORS)
def test_each_door_takes_code_right_at_the_limit(client, exercise, learner, door):
    code = "€" * 682 + "xx"  # 2048 bytes of UTF-8

    response = DOORS[door](client, exercise, _body(exercise, code))

    assert response.status_code == {"run": 201, "save": 200}[door], response.content
    if door == "run":
        assert Run.objects.get(user=learner).code == code
    else:
        assert ExerciseState.objects.get(user=learner, exercise=exercise).code == code


@pytest.mark.parametrize("door", DOORS)
def test_each_door_answers_a_body_far_over_the_limit_413_in_json(client, exercise, learner, door, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    response = DOORS[door](client, exercise, _body(exercise, "#" * 200_000))

    assert response.status_code == 413
    assert response.json()["detail"] == f"The request is far over the code limit of {LIMIT} bytes."
    assert not Run.objects.filter(user=learner).exists()
    assert not ExerciseState.objects.filter(user=learner).exists()

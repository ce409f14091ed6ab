"""A learner's own module through a real worker and the public API: the first part's passing
run makes their `double` the one the second part's exercise imports, while the check of that
exercise still reads the course's; before the pass, and for a later part's piece, the import
says why it fails; the package download holds the learner's copy."""

import io
import zipfile

import pytest
from rest_framework.authtoken.models import Token

from courses.models import Exercise, OwnPiece
from tests.learning.own_module_support import own_double, two_part_course
from tests.runner.test_api_events import submit

pytestmark = pytest.mark.services

MARKER = "Mine: x added to itself."


def run_to_end(web, token, exercise, code) -> dict:
    import time

    import requests

    run_id = submit(web, token, exercise, code)
    deadline = time.monotonic() + 120
    while True:
        body = requests.get(f"{web.url}/api/runs/{run_id}/", headers={"Authorization": f"Token {token}"}, timeout=30)
        body = body.json()
        if body["status"] not in ("queued", "running"):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def output(body: dict) -> str:
    """What the page shows: the streams and any error's message."""
    errors = [f"{event.get('ename')}: {event.get('evalue')}" for event in body["outputs"] if event["type"] == "error"]
    return body["stdout"] + body["stderr"] + "\n".join(errors)


def test_the_second_part_runs_on_the_learners_own_first_part_code(run_worker, web_server, make_learner, client):
    course = two_part_course()
    learner = make_learner()
    token = Token.objects.create(user=learner).key
    double_it, use_it, look_ahead = (
        Exercise.objects.get(chapter__course=course, slug=s) for s in ("double-it", "use-it", "look-ahead")
    )

    before = run_to_end(web_server, token, use_it, use_it.starter_code)
    assert before["passed"] is False
    assert "double comes from Part 1, which you have not passed yet" in output(before)

    # A right double passes on numbers the program never saw, and becomes the learner's own.
    passed = run_to_end(web_server, token, double_it, own_double(MARKER))
    assert passed["passed"] is True, passed
    piece = OwnPiece.objects.get(user=learner, exercise=double_it)
    assert piece.names == ["double"] and MARKER in piece.source and "print(" not in piece.source

    after = run_to_end(web_server, token, use_it, use_it.starter_code)
    assert f"double says: {MARKER}" in output(after)
    assert "quadruple(3) = 12" in output(after)
    assert after["passed"] is True, after  # its check imported the course's module, not the learner's

    later = run_to_end(web_server, token, look_ahead, look_ahead.starter_code)
    assert "octuple comes from Part 3, a later part" in output(later)

    # The write-the-body exercise itself never gets the course's double.
    course_copy = run_to_end(web_server, token, double_it, "from groundup import double\n")
    assert "double is what this exercise asks you to write" in output(course_copy)

    client.force_login(learner)
    response = client.get(f"/courses/{course.slug}/complete/package/")
    assert response.status_code == 200
    with zipfile.ZipFile(
        io.BytesIO(b"".join(response.streaming_content if response.streaming else [response.content]))
    ) as package:
        module = next(package.read(name).decode() for name in package.namelist() if name.endswith("/groundup.py"))
    assert MARKER in module and "def quadruple(x):" in module
    page = client.get(f"/courses/{course.slug}/complete/").content.decode()
    assert "Your own code, which your later parts run:" in page and "<code>double</code>" in page

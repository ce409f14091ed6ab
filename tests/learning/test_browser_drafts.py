"""Edits never lost, in a real browser (uvicorn, a real worker, the local sandbox): what a learner
types while the server cannot be reached stays in the browser, comes back when the exercise opens
again (a reload, the tab closed and opened again) and is saved once the server answers; a run
sent meanwhile says it could not be sent. Two tabs on one exercise: the later save does not
overwrite the other's edit; the learner sees both and chooses.

"The server cannot be reached" is the browser context taken offline (Playwright's set_offline):
every request fails, as against a server that is down, and the page is opened again once it is
back."""

import time

import pytest
from django.conf import settings

from courses.models import Exercise, ExerciseState
from tests.learning.test_browser_editor import (  # the same browser, page and helpers
    _exercise,
    _replace_code,
    _sign_up,
    browser,  # noqa: F401 - a fixture
    part_2,  # noqa: F401 - a fixture
)

pytestmark = pytest.mark.browser


def saved_code(learner: str, exercise: Exercise) -> str | None:
    state = ExerciseState.objects.filter(user__username=learner, exercise=exercise).first()
    return state.code if state and state.code_saved_at else None


def saved_code_becomes(learner: str, exercise: Exercise, code: str) -> None:
    deadline = time.monotonic() + 60
    while saved_code(learner, exercise) != code:
        assert time.monotonic() < deadline, f"never saved: {saved_code(learner, exercise)!r}"
        time.sleep(0.2)


def test_edits_made_while_the_server_is_unreachable_survive_and_are_saved_later(
    browser,  # noqa: F811
    web_server,
    part_2,  # noqa: F811
    run_worker,
):
    from playwright.sync_api import expect

    exercise = Exercise.objects.get(slug="one-query-three-keys")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _sign_up(page, web_server, "offline1")
    page.goto(web_server.url + part_2)
    first = _exercise(page, "One query, three keys")
    expect(first.locator(".cm-editor")).to_be_visible()

    # Cut off: the save keeps failing and says so, a run cannot be sent, the code stays.
    context.set_offline(True)
    _replace_code(page, first, "print('written offline')\n")
    expect(first.locator(".save-state")).to_contain_text("Not saved: the server cannot be reached")
    first.get_by_role("button", name="Run").click()
    expect(first.locator("[data-exercise-output]")).to_contain_text("Your run could not be sent")
    assert saved_code("offline1", exercise) is None
    # Back online: saved at once.
    context.set_offline(False)
    expect(first.locator(".save-state")).to_have_text("Saved")
    saved_code_becomes("offline1", exercise, "print('written offline')\n")

    # Cut off again, more edits, the tab closed: nothing reached the server.
    context.set_offline(True)
    _replace_code(page, first, "print('written offline, then closed')\n")
    expect(first.locator(".save-state")).to_contain_text("Not saved: the server cannot be reached")
    page.close()
    assert saved_code("offline1", exercise) == "print('written offline')\n"

    # The exercise opened again once the server answers: the edit is back, and saved.
    context.set_offline(False)
    page = context.new_page()
    page.goto(web_server.url + part_2)
    first = _exercise(page, "One query, three keys")
    expect(first.locator(".cm-content")).to_have_text("print('written offline, then closed')")
    expect(first.locator(".save-state")).to_have_text("Saved")
    saved_code_becomes("offline1", exercise, "print('written offline, then closed')\n")
    page.reload()
    first = _exercise(page, "One query, three keys")
    expect(first.locator(".cm-content")).to_have_text("print('written offline, then closed')")
    expect(first.locator(".save-state")).to_have_text("")  # nothing left to restore

    # Code over the limit is neither kept here nor saved, in the words a run of it gets.
    huge = "x = 1\n" + "#" * 70_000 + "\n"
    words = f"Code is {len(huge)} bytes; the limit is {settings.RUNNER_MAX_CODE_BYTES} bytes."
    _replace_code(page, first, huge)
    expect(first.locator(".save-state")).to_have_text(f"Not saved: {words}")
    kept = page.evaluate("() => Object.values(localStorage).join('')")
    assert "#" * 1000 not in kept
    first.get_by_role("button", name="Run").click()
    expect(first.locator("[data-exercise-output]")).to_contain_text(words)
    assert saved_code("offline1", exercise) == "print('written offline, then closed')\n"


def test_two_tabs_on_one_exercise_show_the_conflict_and_the_learner_chooses(
    browser,  # noqa: F811
    web_server,
    part_2,  # noqa: F811
    run_worker,
):
    from playwright.sync_api import expect

    exercise = Exercise.objects.get(slug="one-query-three-keys")
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    tab_a = context.new_page()
    _sign_up(tab_a, web_server, "twotabs1")
    tab_a.goto(web_server.url + part_2)
    tab_b = context.new_page()
    tab_b.goto(web_server.url + part_2)
    a, b = _exercise(tab_a, "One query, three keys"), _exercise(tab_b, "One query, three keys")
    expect(a.locator(".cm-editor")).to_be_visible()
    expect(b.locator(".cm-editor")).to_be_visible()

    _replace_code(tab_a, a, "print('from tab A')\n")
    expect(a.locator(".save-state")).to_have_text("Saved")
    _replace_code(tab_b, b, "print('from tab B')\n")
    expect(b.locator(".save-state")).to_have_text("Not saved: saved elsewhere too. Choose a version below.")
    conflict = b.get_by_role("alert")
    expect(conflict).to_contain_text("saved from another tab or device")
    expect(conflict.locator(".cm-merge-a")).to_contain_text("print('from tab A')")
    expect(conflict.locator(".cm-merge-b")).to_contain_text("print('from tab B')")
    assert saved_code("twotabs1", exercise) == "print('from tab A')\n"  # nothing overwritten

    conflict.get_by_role("button", name="Keep mine").click()
    expect(b.locator(".save-state")).to_have_text("Saved")
    saved_code_becomes("twotabs1", exercise, "print('from tab B')\n")

    # Tab A, still on its own version, is told in turn and takes the other one.
    _replace_code(tab_a, a, "print('from tab A, again')\n")
    conflict_a = a.get_by_role("alert")
    expect(conflict_a.locator(".cm-merge-a")).to_contain_text("print('from tab B')")
    conflict_a.get_by_role("button", name="Take the other one").click()
    expect(a.locator(".cm-content")).to_have_text("print('from tab B')")
    expect(a.locator(".save-state")).to_have_text("Saved")
    assert saved_code("twotabs1", exercise) == "print('from tab B')\n"

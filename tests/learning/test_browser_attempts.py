"""A learner's attempt history in a real browser (uvicorn, a real Celery worker, the local
sandbox): three runs of one exercise are three attempts, newest first with their verdict and what
went wrong; the first compares against the editor in CodeMirror's merge view, and Restore puts it
back in the editor as one change that Ctrl+Z undoes."""

import re
import time

import pytest

from courses.models import Exercise, ExerciseState
from tests.learning.test_browser_editor import (  # the same browser, page and helpers
    ARTIFACTS,
    _editor_text,
    _exercise,
    _replace_code,
    _sign_up,
    browser,  # noqa: F401 - a fixture
    part_2,  # noqa: F401 - a fixture
)

pytestmark = pytest.mark.browser

RAISES = "print('trying something')\nraise ValueError('not this way')\n"
ENDED = re.compile(r"^(Finished in|Failed after) \d+(\.\d)? s$")


def test_three_attempts_a_diff_against_the_first_and_a_restore(browser, web_server, part_2, run_worker):  # noqa: F811
    from playwright.sync_api import expect

    exercise = Exercise.objects.get(slug="one-query-three-keys")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    _sign_up(page, web_server, "attempts1")
    page.goto(web_server.url + part_2)
    first = _exercise(page, "One query, three keys")
    status = first.locator("[data-output-status]")
    expect(first.locator(".cm-editor")).to_be_visible()
    assert exercise.starter_code.splitlines()[0] in _editor_text(first)

    # Three attempts: the starter (its check fails), a program that raises, the solution.
    for code in (None, RAISES, exercise.solution_code):
        if code is not None:
            _replace_code(page, first, code)
        first.get_by_role("button", name="Run").click()
        expect(status).to_have_text(ENDED)
    expect(first.locator("[data-exercise-done]")).to_be_visible()

    history = first.get_by_role("button", name="History")
    expect(history).to_have_attribute("aria-expanded", "false")
    history.click()
    expect(history).to_have_attribute("aria-expanded", "true")
    panel = first.get_by_role("region", name="Your attempts")
    expect(panel.locator(".history-status")).to_have_text("3 attempts, newest first.")
    items = panel.locator(".history-item")
    expect(items).to_have_count(3)
    expect(panel.get_by_role("button", name="Older attempts")).to_be_hidden()  # all three are shown
    expect(items.nth(0)).to_contain_text("Attempt 3")
    expect(items.nth(0).locator(".history-verdict")).to_have_text("Passed")
    expect(items.nth(1).locator(".history-verdict")).to_have_text("Failed")
    expect(items.nth(1).locator(".history-failure")).to_have_text("ValueError: not this way")
    expect(items.nth(2).locator(".history-verdict")).to_have_text("Ran, check not passed")
    expect(items.nth(2).locator(".history-failure")).to_contain_text("The largest weight is still on 'the'")

    # The first attempt against the editor: the starter's query line is marked changed on its side.
    panel.get_by_role("button", name="Compare attempt 1 with the editor").click()
    merge = panel.locator(".cm-mergeView")
    expect(merge).to_be_visible()
    expect(panel.locator(".history-compare-caption")).to_have_text("Attempt 1 (left) against the editor (right)")
    changed_a = merge.locator(".cm-merge-a .cm-changedLine")
    expect(changed_a.first).to_be_visible()
    assert any("query = torch.tensor([4.0, 0.0, 0.0])" in line for line in changed_a.all_text_contents())
    changed_b = merge.locator(".cm-merge-b .cm-changedLine")
    assert any("query" in line for line in changed_b.all_text_contents())
    first.scroll_into_view_if_needed()
    first.screenshot(path=ARTIFACTS / "exercise-history-compare.png")

    # Restore the first attempt: the starter is back, Ctrl+Z brings the solution back.
    panel.get_by_role("button", name="Put attempt 1 in the editor").click()
    expect(merge).to_have_count(0)
    expect(panel.locator(".history-status")).to_have_text("Attempt 1 is in the editor (Ctrl+Z undoes it).")
    saved_code_becomes(learner="attempts1", exercise=exercise, code=exercise.starter_code)
    page.keyboard.press("Control+z")
    saved_code_becomes(learner="attempts1", exercise=exercise, code=exercise.solution_code)

    # A new run shows in the open panel.
    first.get_by_role("button", name="Run").click()
    expect(status).to_have_text(ENDED)
    expect(panel.locator(".history-status")).to_have_text("4 attempts, newest first.")


def saved_code_becomes(*, learner: str, exercise: Exercise, code: str) -> None:
    """The page saves the editor's code a second after a change: what the editor holds, as the
    server keeps it (the editor draws only the lines in view, so its text is read here)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = ExerciseState.objects.filter(user__username=learner, exercise=exercise).first()
        if state is not None and state.code == code:
            return
        time.sleep(0.2)
    raise AssertionError(f"the saved code is not the expected one: {state.code[:200] if state else None!r}")

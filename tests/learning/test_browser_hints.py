"""Hints in a real browser: a learner reveals an exercise's hints one by one under its editor
(the page asks the hints API and shows each in place), they are still there after a reload, and
the instructor's dashboard counts them beside runs to a pass."""

import pytest

from accounts.models import User
from courses.models import Exercise, Hint
from tests.browser import chromium
from tests.learning.test_browser_editor import DEMO_COURSE, _exercise, _sign_up

pytestmark = pytest.mark.browser

REVEAL_WAIT_MS = 30_000
HINTS = ["Which way does the query point now?", "The key of **cat** lies along the second axis."]


@pytest.fixture
def hinted(transactional_db, make_user):
    from courses.services.content_io import course_import

    course = course_import(path=DEMO_COURSE).course
    exercise = Exercise.objects.get(chapter__course=course, slug="one-query-three-keys")
    exercise.hints.all().delete()
    for position, text in enumerate(HINTS, start=1):
        Hint.objects.create(exercise=exercise, position=position, text=text)
    course.instructors.add(make_user(User.Role.INSTRUCTOR, username="teacher"))
    return f"/courses/{course.slug}/{exercise.chapter.slug}/", course.slug


@pytest.fixture
def browser(live_server):
    with chromium() as browser:
        yield browser


def test_hints_revealed_one_by_one_stay_on_the_page_and_reach_the_dashboard(hinted, browser, live_server):
    from playwright.sync_api import expect

    chapter_url, course_slug = hinted
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    _sign_up(page, live_server, "hinted1")
    page.goto(live_server.url + chapter_url)
    exercise = _exercise(page, "One query, three keys")
    expect(exercise.locator(".cm-editor")).to_be_visible()
    hints = exercise.locator("[data-exercise-hints]")
    expect(hints.locator("[data-hints-count]")).to_have_text("0 of 2 shown")

    # Each reveal is a round trip to the server, which a loaded CI machine can make take seconds; a
    # failed one names its answer here rather than leaving a hint that never came.
    _reveal(page, hints.get_by_role("button", name="Stuck? Show a hint"))
    expect(hints.locator(".hint")).to_have_count(1, timeout=REVEAL_WAIT_MS)
    expect(hints.locator(".hint").first).to_have_text(HINTS[0])
    expect(hints.locator(".hint").first).to_be_focused()
    expect(hints.locator("[data-hints-count]")).to_have_text("1 of 2 shown")
    _reveal(page, hints.get_by_role("button", name="Show hint 2"))
    expect(hints.locator(".hint")).to_have_count(2, timeout=REVEAL_WAIT_MS)
    expect(hints.locator(".hint strong")).to_have_text("cat")
    expect(hints.get_by_role("button")).to_have_count(0)  # no hint left to reveal
    assert page.url == live_server.url + chapter_url  # shown in place: the page was not reloaded

    page.reload()
    hints = _exercise(page, "One query, three keys").locator("[data-exercise-hints]")
    expect(hints.locator(".hint")).to_have_count(2)
    expect(hints.locator("[data-hints-count]")).to_have_text("2 of 2 shown")

    teacher = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    teacher.goto(f"{live_server.url}/teach/{course_slug}/")
    teacher.get_by_label("Username").fill("teacher")
    teacher.get_by_label("Password").fill("pw-for-tests-1")
    teacher.get_by_role("button", name="Log in").click()
    row = teacher.get_by_role("row").filter(has_text="One query, three keys")
    header = teacher.get_by_role("columnheader", name="Hints used")
    expect(header).to_be_visible()
    expect(row).to_contain_text("2 by 1")


def _reveal(page, button):
    """Click a "Show hint" button and wait for the hints API's answer, which must be a success."""
    with page.expect_response(
        lambda response: "/hints/" in response.url and response.request.method == "POST", timeout=REVEAL_WAIT_MS
    ) as answer:
        button.click()
    assert answer.value.ok, f"the hints API answered {answer.value.status}: {answer.value.text()[:500]}"

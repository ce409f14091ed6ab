"""A learner takes two parts in a real browser: writes Part 1's `double` in the editor and passes
it, then runs Part 2's exercise, whose output shows that it ran on the learner's own `double`;
the completion page names it and the package they download holds it. The runs go through the web
app under uvicorn, a real Celery worker and the local sandbox."""

import io
import zipfile

import pytest

from tests.learning.browser_support import ARTIFACTS, sign_up
from tests.learning.own_module_support import own_double, two_part_course

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 90_000  # only stops a hung test: a cold run takes seconds on a busy machine
MARKER = "Doubled my own way, by adding x to itself."


@pytest.fixture
def course_slug(transactional_db):
    """Made before the browser starts (Playwright's loop would give later ORM calls a connection
    of their own)."""
    return two_part_course().slug


def _run(page, title: str, code: str | None = None):
    from playwright.sync_api import expect

    section = page.locator("section.exercise", has=page.get_by_role("heading", name=title, exact=True))
    expect(section.locator(".cm-editor")).to_be_visible()
    if code is not None:
        section.locator(".cm-content").click()
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.insert_text(code)
    section.get_by_role("button", name="Run").click()
    return section


def test_part_2_runs_on_the_learners_own_part_1_code(course_slug, browser, web_server, run_worker):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    sign_up(page, web_server.url, "builder")

    page.goto(f"{web_server.url}/courses/{course_slug}/doubling/")
    part_1 = _run(page, "Double it", own_double(MARKER))
    expect(part_1.locator(".out-check.is-passed")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(part_1.locator("[data-exercise-output]")).to_contain_text("42")

    page.goto(f"{web_server.url}/courses/{course_slug}/using-it/")
    part_2 = _run(page, "Use it")
    output = part_2.locator("[data-exercise-output]")
    expect(output.locator(".out-check.is-passed")).to_be_visible(timeout=RUN_TIMEOUT_MS)
    expect(output).to_contain_text(f"double says: {MARKER}")
    expect(output).to_contain_text("quadruple(3) = 12")
    part_2.scroll_into_view_if_needed()
    part_2.screenshot(path=ARTIFACTS / "own-module-part-2.png")

    page.goto(f"{web_server.url}/courses/{course_slug}/complete/")
    expect(page.locator(".record-own")).to_contain_text("double")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download a Python package (.zip)").click()
    with zipfile.ZipFile(io.BytesIO(download_info.value.path().read_bytes())) as package:
        module = next(package.read(name).decode() for name in package.namelist() if name.endswith("/groundup.py"))
    assert MARKER in module
    context.close()

"""A learner who passed exercises and answered a quiz opens the course completion page in a real
browser, from the course outline: sees their quiz score, passes and the pieces they built per part,
then downloads the notebook of their code. Screenshots go to test-artifacts/ for a person to look at.
"""

from types import SimpleNamespace

import nbformat
import pytest

from accounts.services import user_create
from tests.browser import chromium
from tests.learning.browser_support import ARTIFACTS, PASSWORD, axe_violations, log_in, too_wide
from tests.learning.completion_support import course_with_module, record_build

pytestmark = pytest.mark.browser

MARKER = "finisher's own line"


@pytest.fixture
def finisher(transactional_db) -> SimpleNamespace:
    """The course and the learner's record, made before the browser starts: Playwright's event loop
    gives later ORM calls in this thread a connection of their own that teardown would not close."""
    course = course_with_module()
    user = user_create(username="finisher", password=PASSWORD, role="learner")
    record_build(user=user, course=course, marker=MARKER)
    return SimpleNamespace(slug=course.slug, title=course.title, username=user.username)


@pytest.fixture
def browser(live_server):
    # After live_server, so the browser and its kept-alive connections close before the server.
    with chromium() as browser:
        yield browser


def test_a_learner_sees_their_record_and_takes_their_notebook_home(finisher, browser, live_server, tmp_path):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    log_in(page, live_server.url, finisher.username)

    page.goto(f"{live_server.url}/courses/{finisher.slug}/")
    page.get_by_role("link", name="What you have built").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("What you have built so far")

    part_2 = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name="Attention by hand"))
    expect(part_2.locator(".record-quiz")).to_have_text("4 of 5 right at the first try")
    expect(part_2.locator(".record-passes")).to_have_text("1 of 2 passed")
    expect(part_2.locator(".record-exercise.is-passed")).to_contain_text("One query, three keys")
    expect(part_2).to_contain_text("In progress")
    expect(part_2.locator(".record-pieces")).to_contain_text("groundup.causal_mask")
    part_4 = page.get_by_role("listitem").filter(has=page.get_by_role("heading", name="The feed-forward block"))
    expect(part_4).to_contain_text("Not started")
    expect(part_4.locator(".record-passes")).to_have_text("0 of 1 passed")
    page.screenshot(path=ARTIFACTS / "completion-page.png", full_page=True)
    assert not axe_violations(page)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download the notebook (.ipynb)").click()
    download = download_info.value
    assert download.suggested_filename == "transformers.ipynb"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    notebook = nbformat.read(saved, as_version=4)
    nbformat.validate(notebook)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert MARKER in code

    # On a phone the record still fits the screen.
    page.set_viewport_size({"width": 390, "height": 844})
    assert not too_wide(page, 390)
    page.screenshot(path=ARTIFACTS / "completion-page-phone.png", full_page=True)
    context.close()

"""An admin in a real browser (Chromium): breaks an exercise's check in the code editor, saves,
sees the validation fail with the reason, cannot publish the chapter, reverts the change from the
history, validates again and publishes; and the body's live preview shows a glossary popover and
a formula while they type. Validation runs in a real Celery worker on the local sandbox
(bubblewrap)."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings

from courses.models import Chapter, Exercise
from courses.services.content_io import course_import
from tests.browser import chromium
from tests.courses.test_authoring_validation import BROKEN_CHECK, SOLUTION, STARTER

pytestmark = pytest.mark.browser
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"  # screenshots for a person to look at
PASSWORD = "pw-for-tests-1"


@pytest.fixture
def draft(transactional_db, course_dir, make_user, local_backend) -> SimpleNamespace:
    """Plain values, read before the browser starts (Playwright's event loop and the ORM do not
    share this thread well)."""
    course = course_import(path=course_dir).course
    chapter = course.chapters.get(slug="first-steps")
    Chapter.objects.filter(pk=chapter.pk).update(published=False)
    Exercise.objects.filter(chapter=chapter, slug="make-a-tensor").update(starter_code=STARTER, solution_code=SOLUTION)
    admin = make_user("admin", username="author", password=PASSWORD)
    return SimpleNamespace(chapter_id=chapter.pk, username=admin.username)


@pytest.fixture
def browser(live_server):
    with chromium() as browser:
        yield browser


def _log_in(page, live_server, draft) -> str:
    change_url = f"{live_server.url}/admin/courses/chapter/{draft.chapter_id}/change/"
    page.goto(f"{live_server.url}/admin/login/?next=/admin/courses/chapter/{draft.chapter_id}/change/")
    page.fill("#id_username", draft.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(change_url)
    return change_url


def _save_and_continue(page) -> None:
    with page.expect_navigation():
        page.click("input[name=_continue]")


def test_an_admin_breaks_a_check_cannot_publish_reverts_and_publishes(draft, browser, live_server):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    _log_in(page, live_server, draft)

    # The check is edited in the learners' code editor (CodeMirror), not a textarea.
    check_editor = page.locator(".field-check_code .cm-content")
    expect(check_editor).to_be_visible()
    expect(page.locator(".field-check_code .cm-lineNumbers")).to_be_visible()
    check_editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(BROKEN_CHECK)
    _save_and_continue(page)

    verdict = page.locator(".exercise-validation")
    expect(verdict).to_contain_text("Validation failed")
    expect(verdict).to_contain_text("the solution does not pass its check (succeeded: t should hold four numbers.)")
    expect(verdict.locator("[data-role=solution] summary")).to_contain_text("check failed")
    ARTIFACTS.mkdir(exist_ok=True)
    verdict.scroll_into_view_if_needed()  # CodeMirror lays out the lines of an editor once it is in view
    page.screenshot(path=ARTIFACTS / "admin-validation-failed.png")

    page.check("#id_published")
    _save_and_continue(page)
    expect(page.locator(".errorlist.nonform")).to_contain_text(
        "The chapter cannot be published: Exercise 'make-a-tensor' fails validation"
    )
    expect(page.locator(".errorlist.nonform")).to_contain_text("t should hold four numbers.")

    # The history shows who changed the check, with a diff, and reverts it in one click.
    page.goto(f"{live_server.url}/admin/courses/chapter/{draft.chapter_id}/history/")
    latest = page.locator(".history-entry").first
    expect(latest).to_contain_text(f"by {draft.username}")
    expect(latest.locator(".history-diff")).to_have_count(1)  # the check; line ends alone are no change
    expect(latest.locator(".history-diff")).to_contain_text("+    return len(t) == 4")
    with page.expect_navigation():
        page.locator(".history-entry").last.get_by_role("button", name="Revert to this version").click()
    expect(page.locator(".messagelist")).to_contain_text("Reverted")
    expect(page.locator(".field-check_code .cm-content")).to_contain_text("len(t) == 3")

    with page.expect_navigation():
        page.get_by_role("button", name="Validate").click()
    expect(page.locator(".messagelist")).to_contain_text("Exercise 'make-a-tensor' passes validation")
    expect(page.locator(".exercise-validation")).to_contain_text("Validation passed")

    page.check("#id_published")
    _save_and_continue(page)
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    expect(page.locator("#id_published")).to_be_checked()


def test_the_live_preview_shows_a_popover_and_a_formula_while_typing(draft, browser, live_server):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    _log_in(page, live_server, draft)

    preview = page.locator("[data-preview]")
    expect(preview.locator("h2, h3").first).to_be_visible()  # rendered from the saved body at once
    body = page.locator(".body-editor .cm-content")
    body.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n\nNew words on [[attention]] where $e^{x}$ grows, and [[nonsense]].")

    term = preview.get_by_role("button", name="attention").last
    expect(term).to_be_visible()
    term.click()
    expect(preview.locator(".term-def:popover-open")).to_contain_text("A weighted blend of value vectors.")
    expect(preview.locator("math").last).to_be_visible()
    expect(page.locator(".preview-problems")).to_contain_text("[[nonsense]] names no glossary term")
    expect(page.locator(".body-editor .cm-problem-line")).to_have_count(1)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "admin-body-preview.png", full_page=False)

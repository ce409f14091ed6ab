"""Shared pieces of the quiz, progress and accessibility browser tests: Debian's Chromium through
Playwright (never a downloaded browser), the demo course, sign-up and axe-core."""

import shutil
from pathlib import Path

from django.conf import settings

from courses.models import Course
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.services import service_missing

ROOT = Path(settings.BASE_DIR)
ARTIFACTS = ROOT / "test-artifacts"
DEMO_COURSE = ROOT / "courses" / "content" / "transformers"
AXE = ROOT / "frontend" / "static" / "dist" / "axe.min.js"
PASSWORD = "a long pass phrase"


def browser_launch():
    """Debian's Chromium under Playwright, for a `browser` fixture (tests/learning/conftest.py)."""
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        service_missing(f"Chromium not found at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def demo_course() -> Course:
    from courses.services.content_io import course_import

    return course_import(path=DEMO_COURSE).course


def sign_up(page, base_url: str, username: str) -> None:
    from playwright.sync_api import expect

    page.goto(base_url + "/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.com")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator(".account")).to_contain_text(username)


def log_in(page, base_url: str, username: str) -> None:
    from playwright.sync_api import expect

    page.goto(base_url + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".account")).to_contain_text(username)


def axe_violations(page, *, context: str = "document") -> list[dict]:
    """axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA)."""
    if not AXE.exists():
        service_missing("axe-core is not built (cd frontend && npm ci && npm run build)")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate(
        """async (context) => {
            const target = context === "document" ? document : document.querySelector(context);
            const run = await axe.run(target, {
                runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
            });
            return run.violations.map((v) => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + " :: " + n.failureSummary.split("\\n").slice(0, 2).join(" ")),
            }));
        }""",
        context,
    )
    return [v for v in results if v["impact"] in ("serious", "critical")]


def too_wide(page, width: int) -> list[str]:
    """Elements that stick out of a phone's width, besides those that scroll inside themselves."""
    return page.evaluate(
        """(width) => [...document.querySelectorAll('body *')]
            .filter((el) => el.getBoundingClientRect().right > width + 1
                && !el.closest('pre, .math-display, table, dialog, [popover], .cm-editor'))
            .map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))""",
        width,
    )

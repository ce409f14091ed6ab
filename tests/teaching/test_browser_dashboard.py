"""An instructor in a real browser: opens the dashboard, filters by a cohort, opens a learner and
downloads the CSV. Screenshots go to test-artifacts/ for a person to look at the layout."""

import csv
import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings

from tests.browser import chromium

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"

pytestmark = pytest.mark.browser


@pytest.fixture
def dash(transactional_db, make_user, settings) -> SimpleNamespace:
    """The hand-built course, read into plain values before the browser starts."""
    from tests.teaching.conftest import hand_course_build

    hand = hand_course_build(make_user=make_user, settings=settings)
    return SimpleNamespace(morning=hand.morning.pk, bob=hand.bob.pk, teacher="teacher", password="pw-for-tests-1")


@pytest.fixture
def browser(live_server):
    with chromium() as browser:
        yield browser


def test_it_lets_an_instructor_filter_by_cohort_open_a_learner_and_download_the_csv(dash, browser, live_server):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{live_server.url}/teach/")
    page.get_by_label("Username").fill(dash.teacher)
    page.get_by_label("Password").fill(dash.password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Teaching")
    page.get_by_role("link", name="Hand-built course").click()

    expect(page.locator("[data-stat=enrolled]")).to_have_text("4")
    expect(page.locator("[data-chart=funnel] svg .chart-bar")).to_have_count(2)
    expect(page.locator("[data-chart=exercises] svg")).to_be_visible()
    page.screenshot(path=ARTIFACTS / "dashboard.png", full_page=True)

    page.get_by_label("Cohort", exact=True).select_option(str(dash.morning))
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("[data-stat=enrolled]")).to_have_text("2")
    expect(page.locator(".page-head")).to_contain_text("Cohort: Morning")
    page.screenshot(path=ARTIFACTS / "dashboard-cohort.png", full_page=True)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Learners' progress").click()
    download = download_info.value
    rows = list(csv.reader(io.StringIO(Path(download.path()).read_text())))
    assert sorted(row[1] for row in rows[1:]) == ["ann", "bob"]
    assert download.suggested_filename.startswith("hand-learners-cohort")

    page.goto(f"{live_server.url}/teach/hand/")
    page.locator("#stuck-learners").get_by_role("link", name="cat").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("cat")
    page.locator(".dash-run summary").first.click()
    expect(page.locator(".dash-run details[open] .dash-code").first).to_be_visible()
    page.screenshot(path=ARTIFACTS / "dashboard-learner.png", full_page=True)

    dark = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    dark.add_cookies(context.cookies())
    dark_page = dark.new_page()
    dark_page.goto(f"{live_server.url}/teach/hand/")
    dark_page.screenshot(path=ARTIFACTS / "dashboard-dark.png", full_page=True)
    dark.close()
    context.close()

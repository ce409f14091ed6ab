"""While a run's event stream is open the page asks nothing else about the run: the stream says
when a worker claims it (`running`), carries its output, and ends with its status and facts. The
page polls the run only when the stream cannot be opened. Real browser, web app under uvicorn,
Celery worker, local sandbox; the test counts the requests the page makes."""

import re

import pytest

from tests.learning.browser_support import demo_course, sign_up

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 180_000  # only stops a hung test (a cold torch import on a busy machine is slow)
FINISHED = re.compile(r"^Finished in \d+(\.\d)? s$")
RUN_STATUS_URL = re.compile(r"/api/runs/[0-9a-f-]{36}/$")
RUN_STREAM_URL = re.compile(r"/api/runs/[0-9a-f-]{36}/events/\?running=1$")
# Prints nothing: the page can only learn that it runs from the stream's `running` event.
SILENT = "import time\ntime.sleep(600)\n"
MEMORY = "block = bytearray(4 * 1024**3)\n"


@pytest.fixture
def part_2(transactional_db):
    course = demo_course()
    chapter = course.chapters.get(number=2)
    # A cold sandbox importing torch on a busy machine can take most of the demo's 20 s; these
    # tests are about what the page asks, not about the time limit.
    chapter.exercises.update(time_limit_s=120)
    return f"/courses/{course.slug}/{chapter.slug}/"


@pytest.fixture
def expect_runs():
    from playwright.sync_api import expect

    expect.set_options(timeout=RUN_TIMEOUT_MS)
    yield expect
    expect.set_options(timeout=5_000)


def _exercise(page, title: str):
    return page.locator("section.exercise", has=page.get_by_role("heading", name=title, exact=True))


def _replace_code(page, exercise, code: str) -> None:
    exercise.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def _requests(page) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    page.on("request", lambda request: seen.append((request.method, request.url)))
    return seen


def test_the_page_follows_runs_on_the_stream_alone(browser, web_server, part_2, run_worker, expect_runs):
    expect = expect_runs
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_up(page, web_server.url, "streamer1")
    page.goto(web_server.url + part_2)
    seen = _requests(page)
    first, second = _exercise(page, "One query, three keys"), _exercise(page, "A mask that hides the future")
    status = first.locator("[data-output-status]")

    # A program that prints nothing: "Running…" can only come from the stream; then Stop.
    _replace_code(page, first, SILENT)
    first.get_by_role("button", name="Run").click()
    expect(status).to_have_text("Running…")
    assert first.locator("[data-output-body]").inner_text() == ""
    first.get_by_role("button", name="Stop").click()
    expect(status).to_have_text("Stopped by you")
    expect(status).to_have_attribute("data-tone", "neutral")

    # A limit stops the program: the page says which, in the reason's words.
    _replace_code(page, second, MEMORY)
    second.get_by_role("button", name="Run").click()
    expect(second.locator("[data-output-status]")).to_have_text("Stopped: memory limit 2 GiB")
    expect(second.locator("[data-output-status]")).to_have_attribute("data-tone", "bad")

    # The starter code runs to its end: output, the check's verdict, the time it took.
    first.get_by_role("button", name="Reset").click()
    expect(first.locator(".cm-content")).to_contain_text("query = torch.tensor")
    first.get_by_role("button", name="Run").click()
    expect(status).to_have_text(FINISHED)
    expect(first.locator(".out-stdout")).to_contain_text("most weight on: the")
    expect(first.locator(".out-check.is-failed")).to_be_visible()
    expect(first.locator("[data-exercise-done]")).to_be_hidden()

    streams = [url for method, url in seen if RUN_STREAM_URL.search(url)]
    status_polls = [url for method, url in seen if method == "GET" and RUN_STATUS_URL.search(url)]
    runs_created = [url for method, url in seen if method == "POST" and url.endswith("/api/runs/")]
    assert (len(runs_created), len(streams)) == (3, 3), seen
    assert status_polls == [], "no GET of a run's status while its stream is open"
    context.close()


def test_the_page_polls_the_run_when_the_stream_cannot_be_opened(browser, web_server, part_2, run_worker, expect_runs):
    expect = expect_runs
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_up(page, web_server.url, "streamer2")
    page.goto(web_server.url + part_2)
    page.route(RUN_STREAM_URL, lambda route: route.abort())  # a proxy that refuses event streams
    seen = _requests(page)
    first = _exercise(page, "One query, three keys")

    first.get_by_role("button", name="Run").click()

    expect(first.locator("[data-output-status]")).to_have_text(FINISHED)
    expect(first.locator(".out-stdout")).to_contain_text("most weight on: the")
    assert [url for method, url in seen if method == "GET" and RUN_STATUS_URL.search(url)], "the fallback polled"
    context.close()

"""A learner in a real browser runs the exercises of Part 2 against the web app under uvicorn (as
`make run` and production serve it), a real Celery worker and the local (bubblewrap) sandbox: output
streams into the page while the code runs, a changed query passes the check and marks the exercise
done, Stop ends an endless loop, a matplotlib heat map shows as an image, and their code is back
after a reload.

Screenshots go to test-artifacts/ for a person to look at the layout.
"""

import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from courses.models import ExerciseState
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.services import service_missing

ROOT = Path(settings.BASE_DIR)
ARTIFACTS = ROOT / "test-artifacts"
DEMO_COURSE = ROOT / "courses" / "content" / "transformers"
BUNDLE = ROOT / "frontend" / "static" / "dist" / "learn.js"
FINISHED = re.compile(r"^Finished in \d+(\.\d)? s$")
RUN_TIMEOUT_MS = 60_000  # only stops a hung test; a run takes a second or two

HEAT_MAP = """import matplotlib.pyplot as plt
import torch

tokens = ["the", "cat", "sat"]
scores = torch.tensor([[2.0, 0.5, 0.1], [0.3, 2.5, 0.2], [0.4, 1.0, 1.8]])
attention = torch.softmax(scores, dim=-1)

fig, ax = plt.subplots(figsize=(4, 3.4))
image = ax.imshow(attention, cmap="viridis")
ax.set_xticks(range(3), tokens)
ax.set_yticks(range(3), tokens)
ax.set_xlabel("key")
ax.set_ylabel("query")
ax.set_title("Attention weights")
fig.colorbar(image)
print(attention)
"""

ENDLESS = """import time
print("looping until you press Stop", flush=True)
while True:
    time.sleep(0.05)
"""

pytestmark = pytest.mark.browser


@pytest.fixture
def browser():
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        service_missing(f"Chromium not found at {CHROMIUM}")
    if not BUNDLE.exists():
        service_missing("the browser bundle is not built (cd frontend && npm ci && npm run build)")
    from playwright.sync_api import expect, sync_playwright

    # Runs take seconds (a sandbox starts, torch imports): assertions wait up to RUN_TIMEOUT_MS.
    expect.set_options(timeout=RUN_TIMEOUT_MS)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        expect.set_options(timeout=5_000)


@pytest.fixture
def part_2(transactional_db):
    from courses.services.content_io import course_import

    course = course_import(path=DEMO_COURSE).course
    chapter = course.chapters.get(number=2)
    return f"/courses/{course.slug}/{chapter.slug}/"


def _sign_up(page, live_server, username: str) -> None:
    from playwright.sync_api import expect

    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Email").fill(f"{username}@example.com")
    page.get_by_label("Password", exact=True).fill("a long pass phrase")
    page.get_by_label("Password confirmation").fill("a long pass phrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.locator(".account")).to_contain_text(username)


def _exercise(page, title: str):
    return page.locator("section.exercise", has=page.get_by_role("heading", name=title, exact=True))


def _replace_code(page, exercise, code: str) -> None:
    """Select everything in the editor and put `code` in its place, as a paste does."""
    exercise.locator(".cm-content").click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def _editor_text(exercise) -> str:
    """The code as the editor shows it, line by line (short exercises: every line is drawn)."""
    return "\n".join(exercise.locator(".cm-content .cm-line").all_text_contents())


def test_it_runs_checks_stops_draws_and_restores_a_learners_code(browser, web_server, part_2, run_worker):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _sign_up(page, web_server, "runner1")
    page.goto(web_server.url + part_2)

    first = _exercise(page, "One query, three keys")
    output = first.locator("[data-exercise-output]")
    status = first.locator("[data-output-status]")
    expect(first.locator(".cm-editor")).to_be_visible()
    expect(first.locator(".exercise-code")).to_be_hidden()  # the static listing gave way to the editor
    expect(first.locator(".editor-help")).to_have_text("Ctrl+Enter runs · Esc then Tab leaves the editor")
    expect(first.locator(".cm-gutters")).to_contain_text("1")
    expect(first.locator(".cm-content .tok-keyword").first).to_have_text("import")
    expect(first.locator("[data-exercise-done]")).to_be_hidden()
    expect(output).to_contain_text('Click "Run" to execute your code')

    # Run the starter code: output arrives, and the check says what is still to do.
    first.get_by_role("button", name="Run").click()
    expect(status).to_have_text(FINISHED)
    expect(output.locator(".out-stdout")).to_contain_text("most weight on: the")
    expect(output.locator(".out-stdout")).to_contain_text("weights:")
    expect(output.locator(".out-check.is-failed")).to_contain_text("The largest weight is still on 'the'")
    expect(first.locator("[data-exercise-done]")).to_be_hidden()

    # Point the query along the second dimension, typing in the editor, and run with Ctrl+Enter.
    first.locator(".cm-line", has_text="query = torch.tensor([4.0, 0.0, 0.0])").click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.type("query = torch.tensor([0.0, 4.0, 0.0])")
    assert "query = torch.tensor([0.0, 4.0, 0.0])\n" in _editor_text(first)
    page.keyboard.press("Control+Enter")
    expect(output.locator(".out-check.is-passed")).to_contain_text("'cat' now takes")
    expect(status).to_have_text(FINISHED)
    expect(output.locator(".out-stdout")).to_contain_text("most weight on: cat")
    expect(first.locator("[data-exercise-done]")).to_be_visible()
    expect(first.locator("[data-exercise-done]")).to_have_text("✓ Done")
    first.scroll_into_view_if_needed()
    first.screenshot(path=ARTIFACTS / "exercise-check-passed.png")
    page.screenshot(path=ARTIFACTS / "chapter-with-output.png", full_page=True)

    # An endless loop, then Stop.
    second = _exercise(page, "A mask that hides the future")
    second_status = second.locator("[data-output-status]")
    _replace_code(page, second, ENDLESS)
    second.get_by_role("button", name="Run").click()
    expect(second_status).to_have_text("Running…")
    expect(second.locator(".out-stdout")).to_contain_text("looping until you press Stop")  # streamed
    stop = second.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    stop.click()
    expect(second_status).to_have_text("Stopped by you")
    expect(stop).to_be_hidden()
    expect(second.locator(".out-stdout")).to_contain_text("looping until you press Stop")
    expect(second.get_by_role("button", name="Run")).to_be_enabled()

    # An attention heat map drawn with matplotlib shows as an image.
    _replace_code(page, second, HEAT_MAP)
    second.get_by_role("button", name="Run").click()
    figure = second.locator(".out-figure img")
    expect(figure).to_be_visible()
    expect(figure).to_have_attribute("alt", re.compile(r"^Figure 1 drawn by your code"))
    assert figure.evaluate("(img) => img.complete && img.naturalWidth") > 100
    expect(second_status).to_have_text(FINISHED)
    second.scroll_into_view_if_needed()
    second.screenshot(path=ARTIFACTS / "exercise-heat-map.png")
    page.screenshot(path=ARTIFACTS / "chapter-with-heat-map.png", full_page=True)

    # Reload: each exercise has the learner's code back, and the first is still done.
    expect(second.locator(".save-state")).to_have_text("Saved")
    page.reload()
    first, second = _exercise(page, "One query, three keys"), _exercise(page, "A mask that hides the future")
    expect(first.locator(".cm-editor")).to_be_visible()
    assert "query = torch.tensor([0.0, 4.0, 0.0])\n" in _editor_text(first)
    assert _editor_text(second) == HEAT_MAP
    expect(first.locator("[data-exercise-done]")).to_be_visible()
    expect(second.locator("[data-exercise-done]")).to_be_hidden()
    states = {
        s.exercise.slug: s for s in ExerciseState.objects.select_related("exercise").filter(user__username="runner1")
    }
    assert states["one-query-three-keys"].passed_at is not None
    assert states["a-mask-that-hides-the-future"].passed_at is None

    # Reset puts the starter code back as one change that Ctrl+Z undoes.
    second.get_by_role("button", name="Reset").click()
    assert "return torch.zeros(n, n, dtype=torch.bool)  # hides nothing yet" in _editor_text(second)
    page.keyboard.press("Control+z")
    assert _editor_text(second) == HEAT_MAP
    context.close()


def test_it_lets_keyboard_users_out_and_visitors_in_and_says_why_a_run_cannot_start(
    browser, live_server, part_2, settings
):
    from playwright.sync_api import expect

    from accounts.models import User
    from courses.models import Exercise
    from runner.models import Run

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    # A visitor sees the editor, and Run invites them to log in and come back.
    page.goto(live_server.url + part_2)
    first = _exercise(page, "One query, three keys")
    expect(first.locator(".cm-editor")).to_be_visible()
    login = first.get_by_role("link", name="Log in to run")
    expect(login).to_have_attribute("href", f"/accounts/login/?next={part_2}")
    expect(first.get_by_role("button", name="Run")).to_have_count(0)

    # On a 390 px phone the editor and its toolbar fit; long code lines scroll inside the editor.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    mobile = phone.new_page()
    mobile.goto(live_server.url + part_2)
    mobile_exercise = _exercise(mobile, "One query, three keys")
    expect(mobile_exercise.locator(".cm-editor")).to_be_visible()
    assert mobile.evaluate("document.documentElement.scrollWidth") <= 390
    mobile_exercise.screenshot(path=ARTIFACTS / "exercise-mobile.png")
    phone.close()

    _sign_up(page, live_server, "keyboard1")
    page.goto(live_server.url + part_2)
    first = _exercise(page, "One query, three keys")
    status = first.locator("[data-output-status]")

    # Tab indents inside the editor; Escape then Tab moves on to the Run button.
    first.locator(".cm-line", has_text="tokens = [").click()
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    expect(first.locator(".cm-line", has_text="tokens = [")).to_have_text('    tokens = ["the", "cat", "sat"]')
    assert page.evaluate("document.activeElement.classList.contains('cm-content')")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Run"
    page.keyboard.press("Shift+Tab")
    expect(first.locator(".cm-content")).to_be_focused()

    # Too many runs going at once: the page says so and when to try again.
    settings.RUNNER_MAX_ACTIVE_PER_LEARNER = 1
    exercise = Exercise.objects.get(slug="one-query-three-keys")
    learner = User.objects.get(username="keyboard1")
    Run.objects.create(user=learner, exercise=exercise, code="print(1)")  # queued: no worker in this test
    first.get_by_role("button", name="Run").click()
    expect(status).to_contain_text("Too many runs at once")
    expect(status).to_contain_text("Try again in 2 s")
    expect(first.get_by_role("button", name="Run")).to_be_enabled()

    # Code over 64 KiB is neither saved nor run, and the page says why.
    _replace_code(page, first, "x = 1\n" + "#" * 70_000 + "\n")
    first.get_by_role("button", name="Run").click()
    expect(status).to_contain_text("Your code is too large to run.")
    expect(status).to_contain_text(f"the limit is {settings.RUNNER_MAX_CODE_BYTES} bytes")
    expect(first.locator(".save-state")).to_contain_text("Not saved")
    context.close()

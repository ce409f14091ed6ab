"""The whole LTI flow against a real platform (lti1p3platform over HTTP, tests/lti/platform.py), with
the web app under uvicorn, a real Celery worker with the local sandbox, and Debian's Chromium:

- an instructor, launched from the platform, places Part 2 of the demo course by deep linking;
- a learner, in the platform's course page on another origin, launches the placed link inside its
  iframe (third-party cookies blocked), runs an exercise there and sees its output and its check
  pass, and finishes the quiz;
- the learner's score arrives at the platform's grade endpoint, posted by the worker;
- the instructor syncs the class's roster: a learner who never launched joins the class's cohort.

And the frame itself: a page on an origin the registration does not name cannot frame the tool.
"""

import re

import pytest

from courses.models import Chapter
from lti.models import ContextCohort, Deployment, Identity, Platform
from teaching.models import CohortMembership
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.learning.browser_support import ARTIFACTS, demo_course
from tests.lti.platform import INSTRUCTOR, LEARNER, TestPlatform, wait_until
from tests.services import service_missing

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 90_000  # only stops a hung test: a run takes a few seconds
FINISHED = re.compile(r"^Finished in \d+(\.\d)? s$")
# Chromium without third-party cookies (the default of this version, said out loud): only
# partitioned cookies (CHIPS) live in the cross-site iframe.
NO_THIRD_PARTY_COOKIES = [*CHROMIUM_ARGS, "--test-third-party-cookie-phaseout"]


@pytest.fixture
def browser():
    from pathlib import Path
    from shutil import which

    if not Path(CHROMIUM).exists() or which(CHROMIUM) is None:
        service_missing(f"Chromium not found at {CHROMIUM}")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=RUN_TIMEOUT_MS)
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=NO_THIRD_PARTY_COOKIES)
            yield launched
            launched.close()
    finally:
        expect.set_options(timeout=5_000)


@pytest.fixture
def lms(web_server, transactional_db):
    """The platform, registered with the tool served by web_server, for the demo course."""
    course = demo_course()
    platform = TestPlatform().start()
    platform.tool(web_server.url)
    registration = Platform.objects.create(
        name="Test LMS",
        issuer=platform.url,
        client_id=platform.client_id,
        auth_login_url=f"{platform.url}/auth",
        token_url=f"{platform.url}/token",
        keyset_url=f"{platform.url}/jwks",
    )
    Deployment.objects.create(platform=registration, deployment_id=platform.deployment_id)
    registration.courses.add(course)
    platform.class_add("class-1", "Transformers, spring term")
    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.person("stu-2", "Emmy Noether", LEARNER)  # on the roster, never launches
    yield platform, course
    platform.stop()


def test_an_lms_places_a_part_its_learner_works_in_the_iframe_and_the_score_and_roster_arrive(
    browser, lms, run_worker, web_server
):
    from playwright.sync_api import expect

    platform, course = lms
    part_2 = Chapter.objects.get(course=course, number=2)
    ARTIFACTS.mkdir(exist_ok=True)

    # The instructor places Part 2, graded, from the platform's "add content".
    teacher = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    teacher.goto(platform.start_url(user_id="teach-1", deep_link_context="class-1"))
    expect(teacher.get_by_role("heading", level=1)).to_have_text("Place in Test LMS")
    teacher.get_by_label(f"Part 2: {part_2.title}").check()
    expect(teacher.get_by_label("Send learners' scores to the gradebook")).to_be_checked()
    teacher.get_by_role("button", name="Place it").click()
    expect(teacher.get_by_role("heading", level=1)).to_have_text("Placed in the class")
    [placed] = platform.placed
    assert placed["lineItem"]["scoreMaximum"] == part_2.exercises.count() + part_2.questions.count()

    # The learner opens it in the platform's course page: the tool is framed from another origin.
    learner = browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
    learner.goto(platform.frame_page_url(user_id="stu-1", link_id=placed["link_id"]))
    assert learner.url.startswith(platform.url) and not web_server.url.startswith(platform.url)
    tool = learner.frame_locator("#tool")
    expect(tool.get_by_role("heading", level=1)).to_have_text(part_2.title)
    expect(tool.locator(".account")).to_contain_text("ada-lovelace")

    # Runs an exercise inside the iframe: the output shows there, the check passes.
    first = tool.locator("section.exercise", has=tool.get_by_role("heading", name="One query, three keys", exact=True))
    output = first.locator("[data-exercise-output]")
    first.locator(".cm-line", has_text="query = torch.tensor([4.0, 0.0, 0.0])").click()
    learner.keyboard.press("End")
    learner.keyboard.press("Shift+Home")
    learner.keyboard.type("query = torch.tensor([0.0, 4.0, 0.0])")
    first.get_by_role("button", name="Run").click()
    expect(first.locator("[data-output-status]")).to_have_text(FINISHED)
    expect(output.locator(".out-stdout")).to_contain_text("most weight on: cat")
    expect(output.locator(".out-check.is-passed")).to_contain_text("'cat' now takes")
    expect(first.locator("[data-exercise-done]")).to_be_visible()
    learner.screenshot(path=ARTIFACTS / "lti-exercise-in-iframe.png")

    # Finishes the quiz, every answer right at the first try.
    quiz = tool.locator("#quiz")
    questions = list(part_2.questions.order_by("position").prefetch_related("choices"))
    for question in questions:
        expect(quiz).to_contain_text(question.prompt)
        right = next(c.text for c in question.choices.all() if c.is_correct)
        quiz.get_by_role("radio", name=right, exact=True).check()
        quiz.get_by_role("button", name="Check answer").click()
    expect(quiz.locator(".quiz-result")).to_contain_text(f"{len(questions)} of {len(questions)} right at the first try")

    # The score reaches the platform's grade endpoint: one exercise and every question.
    maximum = placed["lineItem"]["scoreMaximum"]
    expected = {"scoreGiven": 1 + len(questions), "scoreMaximum": maximum}
    score = wait_until(
        lambda: (
            (s := platform.scores_for(placed["link_id"]).get("stu-1"))
            and s["scoreGiven"] == expected["scoreGiven"]
            and s
        ),
        timeout_s=60,
        what="the learner's score at the platform",
    )
    assert {k: score[k] for k in expected} == expected
    assert (score["activityProgress"], score["gradingProgress"]) == ("InProgress", "Pending")  # one exercise to go
    posts = platform.posts_for(placed["link_id"], "stu-1")
    assert [post["timestamp"] for post in posts] == sorted(post["timestamp"] for post in posts)

    # The instructor syncs the roster: Emmy, who never launched, joins the class's cohort.
    teacher.goto(f"{web_server.url}/lti/classes/")
    teacher.get_by_role("button", name="Sync the roster from Test LMS").click()
    expect(teacher.get_by_role("status")).to_contain_text("Roster synced: 1 added, 0 removed")
    cohort = ContextCohort.objects.get(context__context_id="class-1", course=course).cohort
    members = set(
        CohortMembership.objects.filter(cohort=cohort).values_list("user__lti_identities__subject", flat=True)
    )
    assert members == {"stu-1", "stu-2"}
    assert Identity.objects.get(subject="stu-2").last_launch_at is None
    teacher.get_by_role("link", name=course.title).click()
    expect(teacher.locator('[data-stat="enrolled"]')).to_have_text("2")


def test_the_launched_tool_may_be_framed_by_its_platform_only(browser, lms, web_server):
    """The same launch framed by the platform works (its pages allow the platform's origin), and a
    page of an origin the registration does not name gets no frame of it."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    platform, course = lms
    platform.link_add(link_id="link-1", context_id="class-1", custom={"course": course.slug, "part": "2"})
    context = browser.new_context()
    page = context.new_page()
    page.goto(platform.frame_page_url(user_id="stu-1", link_id="link-1"))
    expect(page.frame_locator("#tool").get_by_role("heading", level=1)).to_have_text(
        Chapter.objects.get(course=course, number=2).title
    )

    stranger = TestPlatform().start()  # another origin, not the registered platform's
    try:
        page.goto(f"{stranger.url}/nothing")  # a page of its own
        target = f"{web_server.url}/courses/{course.slug}/"
        with page.expect_response(lambda response: response.url == target) as framed:
            page.evaluate(
                "(src) => { const f = document.createElement('iframe'); f.src = src; document.body.append(f); }", target
            )
        # The tool's answer allows the platform's origin only, and Chromium shows the stranger nothing.
        assert framed.value.headers["content-security-policy"] == f"frame-ancestors 'self' {platform.url}"
        [refused_frame] = page.main_frame.child_frames
        try:  # Chromium's error page in place of the tool's, or the navigation failing with its reason
            refused_frame.wait_for_url(re.compile(r"^chrome-error://"))
        except PlaywrightError as error:
            assert "ERR_BLOCKED_BY_RESPONSE" in str(error)
    finally:
        stranger.stop()


def test_a_browser_that_keeps_no_cookie_in_the_frame_gets_the_launch_in_a_new_window(
    browser, lms, run_worker, web_server
):
    """Where not even a partitioned cookie lives in the frame (the launch comes back without the
    state cookie its login set), the frame offers a new window, and the learner works there."""
    from playwright.sync_api import expect

    platform, course = lms
    part_2 = Chapter.objects.get(course=course, number=2)
    platform.link_add(link_id="link-1", context_id="class-1", custom={"course": course.slug, "part": "2"})
    context = browser.new_context(viewport={"width": 1300, "height": 1000})

    def cookie_dropped(route):
        """The login's answer reaches the frame without its Set-Cookie: kept nowhere the frame can read."""
        answer = route.fetch(max_redirects=0)
        headers = {name: value for name, value in answer.headers.items() if name.lower() != "set-cookie"}
        route.fulfill(response=answer, headers=headers)

    # Only the framed login loses its cookie: the new window's goes through as it is.
    login = re.compile(re.escape(f"{web_server.url}/lti/login/") + ".*")
    context.route(login, cookie_dropped)
    page = context.new_page()
    page.goto(platform.frame_page_url(user_id="stu-1", link_id="link-1"))
    offer = page.frame_locator("#tool").get_by_role("link", name="Open in a new window")
    expect(offer).to_be_visible()
    context.unroute(login)
    with context.expect_page() as opened:
        offer.click()
    window = opened.value
    expect(window.get_by_role("heading", level=1)).to_have_text(part_2.title)
    assert window.url.startswith(web_server.url)

    first = window.locator(
        "section.exercise", has=window.get_by_role("heading", name="One query, three keys", exact=True)
    )
    first.get_by_role("button", name="Run").click()
    expect(first.locator("[data-output-status]")).to_have_text(FINISHED)
    expect(first.locator(".out-stdout")).to_contain_text("most weight on")

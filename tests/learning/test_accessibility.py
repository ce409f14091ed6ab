"""axe-core in a real browser finds no serious or critical accessibility violations (WCAG 2.1 A/AA
and best practices) on the catalog, a chapter with its exercise editor and output, the quiz
(asking, after a wrong answer, finished), the vocabulary panel and page, and the course page with
progress, in the light and the dark theme."""

import json

import pytest

from tests.learning.browser_support import axe_violations, demo_course, sign_up

pytestmark = [pytest.mark.browser, pytest.mark.parametrize("scheme", ["light", "dark"])]


def _choice(quiz, text: str):
    # The label that holds exactly this choice (one choice's text may hold another's).
    return quiz.locator("label.quiz-choice").filter(has=quiz.page.get_by_text(text, exact=True))


def _check(page, where: str, found: dict, context: str = "document") -> None:
    violations = axe_violations(page, context=context)
    if violations:
        found[where] = violations


def _learner_page(browser, live_server, scheme: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    sign_up(page, live_server.url, f"axe{scheme}")
    return context, page


def test_it_finds_no_serious_or_critical_violations_on_a_chapter_with_its_exercise_editor(
    browser, live_server, transactional_db, scheme
):
    from playwright.sync_api import expect

    course = demo_course()
    chapter_url = f"{live_server.url}/courses/{course.slug}/{course.chapters.get(number=2).slug}/"
    found: dict[str, list] = {}
    context, page = _learner_page(browser, live_server, scheme)
    page.goto(chapter_url)
    expect(page.locator("section.exercise").first.get_by_role("button", name="Run")).to_be_visible()
    _check(page, "chapter with the exercise editor and output", found)
    context.close()
    assert not found, json.dumps(found, indent=1)


def test_it_finds_no_serious_or_critical_violations_on_the_quiz_progress_catalog_and_vocabulary(
    browser, live_server, transactional_db, scheme
):
    from playwright.sync_api import expect

    course = demo_course()
    part_2 = course.chapters.get(number=2)
    found: dict[str, list] = {}
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(live_server.url + "/")
    _check(page, "catalog (visitor)", found)
    sign_up(page, live_server.url, f"axe{scheme}")

    page.goto(f"{live_server.url}/courses/{course.slug}/{part_2.slug}/")
    quiz = page.locator("#quiz")
    _check(page, "quiz asking", found, context="#quiz")
    question = part_2.questions.order_by("position").first()
    _choice(quiz, question.choices.filter(is_correct=False).first().text).click()
    quiz.get_by_role("button", name="Check answer").click()
    expect(quiz.locator(".feedback-wrong")).to_be_visible()
    _check(page, "quiz after a wrong answer", found, context="#quiz")
    for number, q in enumerate(part_2.questions.order_by("position"), start=1):
        _choice(quiz, q.choices.get(is_correct=True).text).click()
        quiz.get_by_role("button", name="Check answer").click()
        if number == 1:
            expect(quiz.locator(".feedback-right")).to_be_visible()
            _check(page, "quiz after a right answer", found, context="#quiz")
    expect(quiz.locator(".quiz-result")).to_be_visible()
    _check(page, "quiz finished", found, context="#quiz")

    page.get_by_role("button", name="Vocabulary").click()
    expect(page.get_by_role("dialog", name="Vocabulary")).to_be_visible()
    _check(page, "vocabulary panel", found, context="#vocabulary-panel")
    page.keyboard.press("Escape")
    page.goto(f"{live_server.url}/courses/{course.slug}/glossary/")
    _check(page, "vocabulary page", found)
    page.goto(f"{live_server.url}/courses/{course.slug}/")
    expect(page.locator(".course-progress")).to_be_visible()
    _check(page, "course page with progress", found)
    page.goto(live_server.url + "/")
    expect(page.locator(".continue-link")).to_be_visible()
    _check(page, "catalog with progress and Continue", found)
    context.close()
    assert not found, json.dumps(found, indent=1)

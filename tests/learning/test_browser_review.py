"""A learner in a real browser misses a quiz question in Part 2 of the demo course; the Review page
says nothing is due and when the question comes back; half a day later (the review's clock moved,
not slept: the live server runs in this process) it asks that question, the learner answers right
and reads the explanation, and the course outline's due count drops.

Screenshots go to test-artifacts/ for a person to look at.
"""

import re

import pytest

from courses.models import QuizAnswer, ReviewAnswer
from tests.learning.browser_support import ARTIFACTS, axe_violations, demo_course, sign_up

pytestmark = pytest.mark.browser


def _choice_label(form, choice):
    # The label that holds exactly this choice's text (one choice's text may hold another's).
    return form.locator("label.quiz-choice").filter(has=form.page.get_by_text(choice.text, exact=True))


def test_a_missed_question_comes_back_on_the_review_page_when_it_is_due(browser, live_server, transactional_db, clock):
    from playwright.sync_api import expect

    course = demo_course()
    part_2 = course.chapters.get(number=2)
    question = part_2.questions.order_by("position").prefetch_related("choices").first()
    right = next(c for c in question.choices.all() if c.is_correct)
    wrong = next(c for c in question.choices.all() if not c.is_correct)

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    sign_up(page, live_server.url, "reviewlearner")
    page.goto(f"{live_server.url}/courses/{course.slug}/{part_2.slug}/")
    quiz = page.locator("#quiz")
    quiz.scroll_into_view_if_needed()
    _choice_label(quiz, wrong).click()
    quiz.get_by_role("button", name="Check answer").click()
    expect(quiz.locator(".quiz-feedback")).to_contain_text("Not quite")

    # Nothing is due yet: the page says when the question comes back.
    page.goto(f"{live_server.url}/courses/{course.slug}/")
    review_link = page.locator("[data-review-due]")
    expect(review_link).to_have_text("Review: nothing due")
    review_link.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Review")
    body = page.locator("[data-quiz-body]")
    expect(body).to_contain_text("Nothing is due.")
    expect(body).to_contain_text(re.compile(r"The next question is due in 1[12]\shours"))
    expect(body).not_to_contain_text(question.prompt)

    # Half a day later: the outline counts it, the Review page asks it.
    clock.move(hours=12, minutes=5)
    page.goto(f"{live_server.url}/courses/{course.slug}/")
    expect(review_link).to_have_text("Review: 1 question due")
    review_link.click()
    form = page.locator("[data-quiz-form]")
    expect(form).to_contain_text(question.prompt)
    expect(form).to_contain_text(f"Part 2: {part_2.title}")
    expect(body).not_to_contain_text(right.explanation.strip()[:60])
    page.screenshot(path=ARTIFACTS / "review-question.png", full_page=True)
    assert axe_violations(page) == []

    # quiz.js answers in place: right, with the right choice's own explanation, focus on it.
    page.evaluate("window.__samePage = true")
    _choice_label(form, right).click()
    form.get_by_role("button", name="Check answer").click()
    feedback = body.locator(".quiz-feedback")
    expect(feedback).to_contain_text(f"Right: “{right.text}”")
    expect(feedback).to_contain_text(right.explanation.strip()[:60])
    expect(feedback).to_be_focused()
    expect(body).to_contain_text("That was the last question due.")
    assert page.evaluate("window.__samePage") is True
    page.screenshot(path=ARTIFACTS / "review-answered.png", full_page=True)
    assert axe_violations(page) == []

    body.get_by_role("link", name="Back to the course").click()
    expect(page.locator("[data-review-due]")).to_have_text("Review: nothing due")
    # The quiz kept its one wrong answer; the review kept its own.
    assert list(QuizAnswer.objects.values_list("is_correct", flat=True)) == [False]
    assert list(ReviewAnswer.objects.values_list("is_correct", flat=True)) == [True]

"""A learner in a real browser takes the Part 2 quiz of the demo course: a wrong answer explains
itself and lets them try again, right answers move on without a page load, a reload comes back to
the same question, the end shows the score and the review. The course page shows their progress;
after logging out and back in, Continue takes them to Part 2 at the quiz. The quiz fits a phone.

Screenshots go to test-artifacts/ for a person to look at.
"""

import re

import pytest

from courses.models import QuizAnswer
from tests.learning.browser_support import ARTIFACTS, demo_course, log_in, sign_up, too_wide

pytestmark = pytest.mark.browser


def _choice_label(quiz, choice):
    # The label that holds exactly this choice's text (one choice's text may hold another's).
    return quiz.locator("label.quiz-choice").filter(has=quiz.page.get_by_text(choice.text, exact=True))


def test_it_takes_a_learner_through_the_part_2_quiz_and_back_to_it_with_continue(
    browser, live_server, transactional_db
):
    from playwright.sync_api import expect

    course = demo_course()
    part_2 = course.chapters.get(number=2)
    questions = list(part_2.questions.order_by("position").prefetch_related("choices"))
    total = len(questions)  # read from the course: the walk needs at least three questions
    assert total >= 3
    rights = [next(c for c in q.choices.all() if c.is_correct) for q in questions]
    wrongs = [next(c for c in q.choices.all() if not c.is_correct) for q in questions]

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_up(page, live_server.url, "quizlearner")
    page.get_by_role("link", name=course.title).click()
    page.get_by_role("link", name=part_2.title, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(part_2.title)

    quiz = page.locator("#quiz")
    quiz.scroll_into_view_if_needed()
    expect(quiz.get_by_role("heading", name="Check what you learned")).to_be_visible()
    expect(quiz).to_contain_text(f"Question 1 of {total}")
    expect(quiz).to_contain_text(questions[0].prompt)
    # The quiz swaps in place: a marker on the window survives every answer only if the page never reloads.
    page.evaluate("window.__samePage = true")

    # A wrong answer: its own explanation, the choices stay, the chosen one marked, focus on the feedback.
    _choice_label(quiz, wrongs[0]).click()
    quiz.get_by_role("button", name="Check answer").click()
    feedback = quiz.locator(".quiz-feedback")
    expect(feedback).to_contain_text(wrongs[0].explanation.strip()[:60])
    expect(feedback).to_be_focused()
    expect(quiz).to_contain_text(f"Question 1 of {total}")
    expect(quiz.locator("label.quiz-choice")).to_have_count(questions[0].choices.count())
    expect(_choice_label(quiz, wrongs[0])).to_have_class(re.compile(r"\bis-wrong\b"))
    expect(quiz.locator("[data-quiz-announce]")).to_contain_text("Not quite")
    quiz.screenshot(path=ARTIFACTS / "quiz-wrong-answer.png")

    # Another go, right this time: on to question 2.
    _choice_label(quiz, rights[0]).click()
    quiz.get_by_role("button", name="Check answer").click()
    expect(quiz).to_contain_text(f"Question 2 of {total}")
    expect(quiz.locator(".feedback-right")).to_contain_text("Question 1: correct")
    assert page.evaluate("window.__samePage") is True

    # Keyboard alone: focus a choice, pick it with Space, submit with Enter.
    quiz.get_by_role("radio", name=rights[1].text, exact=True).focus()
    page.keyboard.press("Space")
    expect(quiz.get_by_role("radio", name=rights[1].text, exact=True)).to_be_checked()
    page.keyboard.press("Enter")
    expect(quiz).to_contain_text(f"Question 3 of {total}")
    quiz.screenshot(path=ARTIFACTS / "quiz.png")

    # Leaving mid-quiz and coming back: the same question.
    page.reload()
    expect(page.locator("#quiz")).to_contain_text(f"Question 3 of {total}")
    quiz = page.locator("#quiz")
    for number in range(2, total):
        _choice_label(quiz, rights[number]).click()
        quiz.get_by_role("button", name="Check answer").click()
        if number < total - 1:
            expect(quiz).to_contain_text(f"Question {number + 2} of {total}")

    result = quiz.locator(".quiz-result")
    expect(result).to_contain_text(f"{total - 1} of {total} right at the first try")
    expect(result).to_be_focused()
    expect(quiz.locator(".review-item")).to_have_count(total)
    for question, choice in zip(questions, rights, strict=True):
        expect(quiz).to_contain_text(question.prompt)
        expect(quiz).to_contain_text(choice.text)
    quiz.screenshot(path=ARTIFACTS / "quiz-finished.png")
    first_tries = QuizAnswer.objects.filter(user__username="quizlearner", attempt=1).order_by("question__position")
    assert list(first_tries.values_list("is_correct", flat=True)) == [False, True, True, True, True]
    assert QuizAnswer.objects.filter(user__username="quizlearner").count() == 6

    # The course page: the quiz is marked, the part is not complete until its exercises pass.
    page.get_by_role("link", name="Back to course").click()
    published = course.chapters.filter(published=True).count()
    expect(page.locator(".course-progress")).to_contain_text(f"0 of {published} parts complete")
    part_line = page.locator("li.part", has_text=part_2.title)
    expect(part_line).to_contain_text("Quiz finished")
    page.screenshot(path=ARTIFACTS / "course-progress.png", full_page=True)

    # Log out, log back in: Continue on the catalog leads back to Part 2 at the quiz.
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server.url, "quizlearner")
    page.goto(live_server.url + "/")
    continue_link = page.get_by_role("link", name=re.compile(r"^Continue"))
    expect(continue_link).to_have_attribute("href", f"/courses/{course.slug}/{part_2.slug}/#quiz")
    page.screenshot(path=ARTIFACTS / "catalog-progress.png", full_page=True)
    continue_link.click()
    expect(page).to_have_url(re.compile(rf"/courses/{course.slug}/{part_2.slug}/#quiz$"))
    expect(page.locator("#quiz")).to_be_in_viewport()
    expect(page.locator("#quiz")).to_contain_text(f"{total - 1} of {total} right at the first try")

    # A phone, 390 px wide: the quiz of Part 4 with a wrong answer shown fits without sideways scrolling.
    part_4 = course.chapters.get(number=4)
    q4 = part_4.questions.order_by("position").first()
    wrong_4 = q4.choices.filter(is_correct=False).first()
    phone = browser.new_context(
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
        storage_state=context.storage_state(),
    )
    mobile = phone.new_page()
    mobile.goto(f"{live_server.url}/courses/{course.slug}/{part_4.slug}/#quiz")
    mobile_quiz = mobile.locator("#quiz")
    _choice_label(mobile_quiz, wrong_4).tap()
    mobile_quiz.get_by_role("button", name="Check answer").tap()
    expect(mobile_quiz.locator(".quiz-feedback")).to_contain_text(wrong_4.explanation.strip()[:60])
    mobile_quiz.screenshot(path=ARTIFACTS / "quiz-mobile.png")
    mobile.screenshot(path=ARTIFACTS / "chapter-mobile-quiz.png", full_page=True)
    assert mobile.evaluate("document.documentElement.scrollWidth") <= 390, too_wide(mobile, 390)[:10]
    phone.close()
    context.close()

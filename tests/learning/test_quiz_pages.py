"""The quiz on the chapter page as a plain form (no JavaScript) and as the fragment quiz.js swaps in."""

import re

import pytest

from courses.models import QuizAnswer
from tests.learning.conftest import chapter_url, questions_of, quiz_url, right, wrong

pytestmark = pytest.mark.django_db


def _answer(client, course, question, choice, *, number=2, fragment=False):
    headers = {"X-Fragment": "quiz"} if fragment else {}
    return client.post(quiz_url(course, number), {"question": question.pk, "choice": choice.pk}, headers=headers)


def _quiz_html(client, course, number=2) -> str:
    page = client.get(chapter_url(course, number)).content.decode()
    start = page.index('<section id="quiz"')
    return page[start : page.index("</section>", start)]


def test_it_shows_the_first_question_as_a_keyboard_form_at_the_end_of_the_chapter(client, learner, course):
    client.force_login(learner)
    q1 = questions_of(course, 2)[0]
    quiz = _quiz_html(client, course)
    assert "Check what you learned" in quiz and "Question 1 of 5" in quiz and q1.prompt in quiz
    assert quiz.count('type="radio" name="choice"') == 3 and "required" in quiz
    assert "<fieldset" in quiz and "<legend>" in quiz and 'type="submit"' in quiz
    # The right answer is not in the page before it is given.
    assert "is_correct" not in quiz and right(q1).explanation not in quiz


def test_it_sends_a_visitor_who_answers_to_log_in_and_back_to_the_quiz(client, course):
    q1 = questions_of(course, 2)[0]
    assert "Log in</a> or" in _quiz_html(client, course)
    response = _answer(client, course, q1, right(q1))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert "%23quiz" in response["Location"]
    assert not QuizAnswer.objects.exists()


def test_it_comes_back_to_the_quiz_with_the_next_question_after_a_right_answer(client, learner, course):
    client.force_login(learner)
    q1, q2, *_ = questions_of(course, 2)
    response = _answer(client, course, q1, right(q1))
    assert response.status_code == 302 and response["Location"] == chapter_url(course, 2) + "#quiz"
    quiz = _quiz_html(client, course)
    assert "Question 2 of 5" in quiz and q2.prompt in quiz
    assert "Question 1: correct" in quiz and right(q1).explanation in quiz


def test_it_shows_the_chosen_wrong_answer_marked_with_its_explanation_and_asks_again(client, learner, course):
    client.force_login(learner)
    q1 = questions_of(course, 2)[0]
    _answer(client, course, q1, wrong(q1))
    quiz = _quiz_html(client, course)
    assert "Question 1 of 5" in quiz
    assert wrong(q1).explanation in quiz and "Take another go" in quiz
    assert quiz.count('type="radio" name="choice"') == 3  # the choices stay
    marked = re.search(r'<label class="quiz-choice is-wrong">(.*?)</label>', quiz, re.S).group(1)
    assert wrong(q1).text in marked and "Your answer" in marked


def test_it_shows_the_score_and_a_review_of_every_question_at_the_end(client, learner, course):
    client.force_login(learner)
    questions = questions_of(course, 2)
    _answer(client, course, questions[0], wrong(questions[0]))
    for question in questions:
        _answer(client, course, question, right(question))
    quiz = _quiz_html(client, course)
    assert "<strong>4 of 5</strong> right at the first try" in quiz
    assert "Question " + "1 of 5" in quiz and quiz.count('class="review-item"') == 5
    for question in questions:
        assert question.prompt in quiz and right(question).text in quiz and right(question).explanation in quiz
    assert f"Your first answer: {wrong(questions[0]).text}" in quiz
    assert 'name="choice"' not in quiz


def test_it_answers_quiz_js_with_the_quiz_fragment_instead_of_a_redirect(client, learner, course):
    client.force_login(learner)
    q1 = questions_of(course, 2)[0]
    response = _answer(client, course, q1, wrong(q1), fragment=True)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "Question 1 of 5" in html and wrong(q1).explanation in html and "data-quiz-focus" in html
    response = _answer(client, course, q1, right(q1), fragment=True)
    assert "Question 2 of 5" in response.content.decode()


def test_it_answers_another_chapters_question_as_missing_and_records_nothing(client, learner, course):
    client.force_login(learner)
    part_4_question = questions_of(course, 4)[0]
    response = _answer(client, course, part_4_question, right(part_4_question), number=2)
    assert response.status_code == 404
    assert not QuizAnswer.objects.exists()


def test_it_refuses_a_choice_of_another_question_with_a_clear_400(client, learner, course):
    client.force_login(learner)
    q1, q2, *_ = questions_of(course, 2)
    response = _answer(client, course, q1, right(q2))
    assert response.status_code == 400
    assert "another question" in response.content.decode()
    response = _answer(client, course, q1, right(q2), fragment=True)
    assert response.status_code == 400 and "another question" in response.content.decode()
    assert not QuizAnswer.objects.exists()


def test_it_asks_for_a_choice_when_none_was_picked(client, learner, course):
    client.force_login(learner)
    q1 = questions_of(course, 2)[0]
    response = client.post(quiz_url(course, 2), {"question": q1.pk}, headers={"X-Fragment": "quiz"})
    assert response.status_code == 400 and "Choose an answer first" in response.content.decode()


def test_it_answers_the_quiz_of_an_unpublished_chapter_as_missing(client, learner, course):
    client.force_login(learner)
    hidden = questions_of(course, 3)[0]
    assert _answer(client, course, hidden, right(hidden), number=3).status_code == 404
    assert not QuizAnswer.objects.exists()


def test_it_takes_a_double_submitted_form_once(client, learner, course):
    client.force_login(learner)
    q1 = questions_of(course, 2)[0]
    _answer(client, course, q1, wrong(q1))
    _answer(client, course, q1, wrong(q1))
    _answer(client, course, q1, right(q1))
    _answer(client, course, q1, right(q1))
    assert list(QuizAnswer.objects.values_list("attempt", "is_correct")) == [(1, False), (2, True)]
    assert "Question 2 of 5" in _quiz_html(client, course)


def test_it_only_takes_posts(client, learner, course):
    client.force_login(learner)
    assert client.get(quiz_url(course, 2)).status_code == 405


def test_it_shows_the_quiz_in_the_staff_preview_without_taking_answers(client, admin_user, course):
    client.force_login(admin_user)
    chapter = course.chapters.get(number=3)
    page = client.get(f"/preview/chapters/{chapter.pk}/").content.decode()
    assert "Question 1 of 5" in page and "The preview takes no answers" in page

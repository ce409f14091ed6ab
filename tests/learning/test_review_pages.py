"""The course's Review page as a plain form (no JavaScript) and as the fragment quiz.js swaps in,
and the due counts on the catalog and the course outline."""

import re

import pytest
from django.urls import reverse

from courses.models import Course, QuizAnswer, ReviewAnswer
from courses.services.quizzes import quiz_answer
from tests.learning.conftest import questions_of, right, wrong

pytestmark = pytest.mark.django_db


def _review_url(course) -> str:
    return reverse("frontend:review", args=[course.slug])


def _answer(client, course, question, choice, *, fragment=False):
    headers = {"X-Fragment": "quiz"} if fragment else {}
    url = reverse("frontend:review_answer", args=[course.slug])
    return client.post(url, {"question": question.pk, "choice": choice.pk}, headers=headers)


def _body(response) -> str:
    page = response.content.decode()
    start = page.index('<section id="review"')
    return page[start : page.index("</section>", start)]


@pytest.fixture
def missed(learner, course, clock):
    """The learner missed question 1 of Part 2 at their first try, then got it right; twelve hours
    and a minute later it is due."""
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=learner, question=q1, choice=wrong(q1))
    quiz_answer(user=learner, question=q1, choice=right(q1))
    return q1


def test_it_says_nothing_is_due_and_when_the_next_question_is(client, learner, make_user, course, missed, clock):
    client.force_login(learner)
    body = _body(client.get(_review_url(course)))
    assert "Nothing is due." in body and "The next question is due in 12" in body
    assert missed.prompt not in body

    client.force_login(make_user())  # nothing answered yet
    body = _body(client.get(_review_url(course)))
    assert "Nothing is due." in body and "Answer a quiz at the end of a part" in body


def test_it_asks_a_due_question_and_explains_a_wrong_answer_without_javascript(client, learner, course, missed, clock):
    client.force_login(learner)
    clock.move(hours=12, minutes=1)
    body = _body(client.get(_review_url(course)))
    assert "1 question due" in body and missed.prompt in body and "Part 2: " in body
    assert body.count('type="radio" name="choice"') == 3
    assert right(missed).explanation not in body  # the answer is not in the page before it is given

    response = _answer(client, course, missed, wrong(missed))
    answer = ReviewAnswer.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{_review_url(course)}?answered={answer.pk}"
    body = _body(client.get(response["Location"]))
    assert f"Not quite: &ldquo;{wrong(missed).text}&rdquo;" in body
    assert wrong(missed).explanation in body
    assert "Right answer:</span> " + right(missed).text in body and right(missed).explanation in body
    assert "This question comes back in 12" in body
    assert "That was the last question due." in body and "Nothing due" in body
    # The quiz is as it was: two answers, the first wrong.
    assert list(QuizAnswer.objects.order_by("attempt").values_list("is_correct", flat=True)) == [False, True]


def test_it_answers_the_fragment_quiz_js_swaps_in_with_a_next_link(client, learner, course, missed, clock):
    q2 = questions_of(course, 2)[1]
    quiz_answer(user=learner, question=q2, choice=wrong(q2))
    client.force_login(learner)
    clock.move(hours=13)
    first = _body(client.get(_review_url(course)))
    assert "2 questions due" in first and missed.prompt in first  # due longest ago comes first

    response = _answer(client, course, missed, right(missed), fragment=True)
    fragment = response.content.decode()
    assert response.status_code == 200 and "<html" not in fragment
    assert f"Right: &ldquo;{right(missed).text}&rdquo;" in fragment and right(missed).explanation in fragment
    assert "1 question due" in fragment
    assert re.search(rf'<a class="button" href="{_review_url(course)}">Next question</a>', fragment)
    assert q2.prompt in _body(client.get(_review_url(course)))


def test_it_refuses_a_choice_of_another_question_and_a_question_not_due(client, learner, course, missed, clock):
    q2 = questions_of(course, 2)[1]
    client.force_login(learner)
    early = _answer(client, course, missed, right(missed))
    assert early.status_code == 409 and "not due for review until" in early.content.decode()
    clock.move(hours=13)
    mismatch = _answer(client, course, missed, right(q2))
    assert mismatch.status_code == 400 and "That choice belongs to another question." in mismatch.content.decode()
    fragment = _answer(client, course, missed, right(q2), fragment=True)
    assert fragment.status_code == 400 and 'role="alert"' in fragment.content.decode()
    unscheduled = _answer(client, course, q2, right(q2))
    assert unscheduled.status_code == 409 and "not in your review" in unscheduled.content.decode()
    assert not ReviewAnswer.objects.exists()


def test_a_learner_sees_and_answers_only_their_own_review(client, learner, make_user, course, missed, clock):
    clock.move(hours=13)
    client.force_login(learner)
    _answer(client, course, missed, wrong(missed))
    mine = ReviewAnswer.objects.get()

    other = make_user()
    client.force_login(other)
    body = _body(client.get(_review_url(course)))
    assert "Nothing is due." in body and missed.prompt not in body
    # Another learner's answer is not shown to them, whatever its id.
    body = _body(client.get(f"{_review_url(course)}?answered={mine.pk}"))
    assert wrong(missed).explanation not in body and "Nothing is due." in body
    refused = _answer(client, course, missed, right(missed))
    assert refused.status_code == 409 and "not in your review" in refused.content.decode()
    assert ReviewAnswer.objects.count() == 1


def test_it_sends_visitors_to_log_in_and_hides_courses_a_learner_cannot_open(client, learner, course, missed):
    url = _review_url(course)
    response = client.get(url)
    assert response.status_code == 302 and response["Location"] == f"/accounts/login/?next={url}"
    assert _answer(client, course, missed, right(missed)).status_code == 302

    client.force_login(learner)
    draft = Course.objects.create(slug="draft", title="A draft", published=False)
    assert client.get(_review_url(draft)).status_code == 404
    assert client.get("/courses/no-such-course/review/").status_code == 404
    closed = Course.objects.create(
        slug="closed", title="By invitation", published=True, enrolment=Course.EnrolmentPolicy.INVITE
    )
    assert client.get(_review_url(closed)).status_code == 403
    # A question of a part the learner cannot open, or of another course, is not found.
    hidden = questions_of(course, 3)[0]
    assert _answer(client, course, hidden, right(hidden)).status_code == 404
    assert client.post(reverse("frontend:review_answer", args=["closed"]), {}).status_code == 403


def test_the_catalog_and_the_outline_show_the_questions_due(client, learner, course, missed, clock):
    q2 = questions_of(course, 2)[1]
    quiz_answer(user=learner, question=q2, choice=wrong(q2))
    client.force_login(learner)
    course_url = reverse("frontend:course", args=[course.slug])
    assert "due for review" not in client.get("/").content.decode()
    outline = client.get(course_url).content.decode()
    assert "Review: nothing due" in outline

    clock.move(hours=13)
    catalog = client.get("/").content.decode()
    assert f'<a class="due-link" href="{_review_url(course)}" data-review-due>2 questions due for review</a>' in catalog
    assert "Review: 2 questions due" in client.get(course_url).content.decode()

    _answer(client, course, missed, right(missed))
    assert "Review: 1 question due" in client.get(course_url).content.decode()
    assert "1 question due for review" in client.get("/").content.decode()

    client.logout()
    assert "due for review" not in client.get("/").content.decode()
    assert "Review:" not in client.get(course_url).content.decode()

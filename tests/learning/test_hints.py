"""Hints, one at a time: GET/POST /api/exercises/<id>/hints/, the chapter page's hints (with and
without JavaScript's help), and who gets them. A hint not yet revealed is never sent; reveals are
the learner's own and are kept."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import User
from courses.models import Chapter, Course, Enrolment, Exercise, Hint, HintReveal

pytestmark = pytest.mark.django_db

HINTS = [
    "Look at the **shape** of `x` first.",
    "Each row should add up to one.",
    "Divide by the row sums: $w_i / \\sum_j w_j$.",
]


@pytest.fixture
def exercise():
    course = Course.objects.create(slug="hinted", title="Hinted", published=True)
    chapter = Chapter.objects.create(
        course=course, number=1, slug="one", title="One", published=True, body="Intro.\n\n[[exercise:rows]]\n"
    )
    exercise = Exercise.objects.create(chapter=chapter, slug="rows", title="Rows", starter_code="x = 1\n")
    for position, text in enumerate(HINTS, start=1):
        Hint.objects.create(exercise=exercise, position=position, text=text)
    return exercise


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def url(exercise) -> str:
    return f"/api/exercises/{exercise.pk}/hints/"


def test_hints_come_one_at_a_time_and_none_is_sent_before_it_is_revealed(exercise, learner):
    client = client_for(learner)
    before = client.get(url(exercise)).json()
    assert before == {"exercise": exercise.pk, "count": 3, "revealed": [], "next": 1}

    first = client.post(url(exercise), {"position": 1}, format="json").json()
    second = client.post(url(exercise), {"position": 2}, format="json").json()

    assert [h["position"] for h in first["revealed"]] == [1] and first["next"] == 2
    assert [h["text"] for h in second["revealed"]] == HINTS[:2] and second["next"] == 3
    assert "<strong>shape</strong>" in second["revealed"][0]["html"]
    assert HINTS[2] not in str(second)  # the third stays hidden until asked for


def test_a_hint_out_of_turn_is_refused_and_a_repeated_one_reveals_nothing_more(exercise, learner):
    client = client_for(learner)
    skipped = client.post(url(exercise), {"position": 2}, format="json")
    assert skipped.status_code == 400
    assert skipped.json()["detail"] == "Hints come one at a time: the next one is hint 1."
    missing = client.post(url(exercise), {"position": 9}, format="json")
    assert missing.status_code == 400 and missing.json()["detail"] == "This exercise has no hint 9; it has 3 hints."
    assert client.post(url(exercise), {"position": "two"}, format="json").status_code == 400

    client.post(url(exercise), {"position": 1}, format="json")
    again = client.post(url(exercise), {"position": 1}, format="json").json()  # a double click

    assert again["next"] == 2 and HintReveal.objects.count() == 1


def test_a_hint_the_author_added_before_the_revealed_ones_comes_next(exercise, learner):
    client = client_for(learner)
    client.post(url(exercise), {"position": 1}, format="json")
    client.post(url(exercise), {"position": 2}, format="json")
    exercise.hints.filter(position=1).delete()
    Hint.objects.create(exercise=exercise, position=1, text="A new first hint.")
    assert client.get(url(exercise)).json()["next"] == 1


def test_another_learner_sees_none_of_my_reveals_and_a_visitor_gets_nothing(exercise, learner, make_user):
    client_for(learner).post(url(exercise), {"position": 1}, format="json")
    other = client_for(make_user(User.Role.LEARNER)).get(url(exercise)).json()
    assert other["revealed"] == [] and other["next"] == 1
    assert client_for().get(url(exercise)).status_code in (401, 403)
    assert client_for().post(url(exercise), {"position": 1}, format="json").status_code in (401, 403)


def test_hints_of_an_exercise_the_learner_may_not_open_are_not_found(exercise, learner, instructor):
    Chapter.objects.filter(pk=exercise.chapter_id).update(published=False)
    assert client_for(learner).get(url(exercise)).status_code == 404
    assert client_for(learner).post(url(exercise), {"position": 1}, format="json").status_code == 404
    assert client_for(learner).get("/api/exercises/999999/hints/").status_code == 404
    elsewhere = Course.objects.create(slug="elsewhere", title="Elsewhere", published=True)
    elsewhere.instructors.add(instructor)
    assert client_for(instructor).post(url(exercise), {"position": 1}, format="json").status_code == 404
    assert not HintReveal.objects.exists()


def test_a_course_by_invitation_gives_no_hint_to_a_learner_it_does_not_admit(exercise, learner):
    Course.objects.filter(pk=exercise.chapter.course_id).update(enrolment=Course.EnrolmentPolicy.INVITE)
    assert client_for(learner).post(url(exercise), {"position": 1}, format="json").status_code == 403
    assert not HintReveal.objects.exists()


def test_the_chapter_page_shows_revealed_hints_and_reveals_the_next_without_javascript(client, exercise, learner):
    client.force_login(learner)
    page_url = reverse("frontend:chapter", args=["hinted", "one"])
    page = client.get(page_url).content.decode()
    assert "Stuck? Show a hint" in page and "0 of 3 shown" in page and HINTS[0] not in page

    reveal = reverse("frontend:hint_reveal", args=["hinted", "one", exercise.pk])
    response = client.post(reveal, {"position": "1"})

    assert response.status_code == 302 and response["Location"] == f"{page_url}#exercise-rows"
    page = client.get(page_url).content.decode()
    assert "<strong>shape</strong>" in page and "1 of 3 shown" in page and "Show hint 2" in page
    assert client.post(reveal, {"position": "3"}).status_code == 400
    assert client.post(reveal, {}).status_code == 400


def test_a_visitor_sees_no_hint_button_and_a_reveal_asks_them_to_log_in(client, exercise):
    page = client.get(reverse("frontend:chapter", args=["hinted", "one"])).content.decode()
    assert "Show a hint" not in page
    response = client.post(reverse("frontend:hint_reveal", args=["hinted", "one", exercise.pk]), {"position": "1"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not HintReveal.objects.exists()


def test_the_dashboards_count_hints_used_per_exercise(client, exercise, learner, make_user, instructor):
    other = make_user(User.Role.LEARNER)
    for user, count in ((learner, 2), (other, 1)):
        for position in range(1, count + 1):
            client_for(user).post(url(exercise), {"position": position}, format="json")
    course = exercise.chapter.course
    course.instructors.add(instructor)
    client.force_login(instructor)

    board = client_for(instructor).get(f"/api/teach/courses/{course.slug}/dashboard/").json()
    row = next(e for e in board["exercises"] if e["exercise"] == exercise.pk)
    assert (row["hints_revealed"], row["learners_hinted"]) == (3, 2)
    page = client.get(reverse("frontend:teach_course", args=[course.slug])).content.decode()
    assert "Hints used" in page and '3 <span class="dash-muted">by 2</span>' in page

    Enrolment.objects.create(user=learner, course=course)
    mine = client.get(reverse("frontend:teach_learner", args=[course.slug, learner.pk])).content.decode()
    assert "<td>2 of 3</td>" in mine and "not passed yet" in mine

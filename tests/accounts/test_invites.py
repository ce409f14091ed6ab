"""Sign-up and enrolment by invitation (issue 11, item 6): a course can be switched to invite-only,
where only learners who joined one of its cohorts with the instructor's invite link open its
chapters and run its exercises; and self sign-up can be closed for the whole site."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import User
from courses.models import (
    Chapter,
    ChapterProgress,
    Choice,
    Course,
    Enrolment,
    Exercise,
    ExerciseState,
    Question,
    QuizAnswer,
)
from runner.models import Run
from teaching.services.cohorts import cohort_create

PASSWORD = "a-long-pass-phrase"


@pytest.fixture
def course(db, instructor):
    course = Course.objects.create(
        slug="closed-course", title="Closed course", published=True, enrolment=Course.EnrolmentPolicy.INVITE
    )
    course.instructors.add(instructor)
    chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
    Exercise.objects.create(chapter=chapter, slug="ex", title="Ex")
    return course


@pytest.fixture
def cohort(course, instructor):
    return cohort_create(course=course, name="Spring", created_by=instructor)


def chapter_url(course) -> str:
    return reverse("frontend:chapter", args=[course.slug, "one"])


@pytest.mark.django_db
def test_a_learner_without_the_invite_cannot_enrol_in_an_invite_only_course(client, learner, course):
    client.force_login(learner)

    for url in (reverse("frontend:course", args=[course.slug]), chapter_url(course)):
        response = client.get(url)
        assert response.status_code == 403
        assert "This course is by invitation" in response.content.decode()
    assert not Enrolment.objects.filter(user=learner, course=course).exists()

    api = APIClient()
    api.force_authenticate(learner)
    exercise = Exercise.objects.get(chapter__course=course)
    refused = api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json")
    assert refused.status_code == 403
    assert "by invitation" in refused.json()["detail"]


@pytest.mark.django_db
def test_the_invite_link_opens_the_course(client, learner, course, cohort):
    client.force_login(learner)
    client.post(reverse("frontend:cohort_join", args=[cohort.invite_code]))

    assert client.get(chapter_url(course)).status_code == 200
    api = APIClient()
    api.force_authenticate(learner)
    exercise = Exercise.objects.get(chapter__course=course)
    assert api.post("/api/runs/", {"exercise": exercise.id, "code": "print(1)"}, format="json").status_code == 201


@pytest.mark.django_db
def test_instructors_open_their_invite_only_course(client, instructor, course):
    client.force_login(instructor)
    assert client.get(chapter_url(course)).status_code == 200


@pytest.mark.django_db
def test_an_open_course_stays_open(client, learner, course):
    Course.objects.filter(pk=course.pk).update(enrolment=Course.EnrolmentPolicy.OPEN)
    client.force_login(learner)
    assert client.get(chapter_url(course)).status_code == 200


@pytest.mark.django_db
def test_closed_sign_up_refuses_a_new_account_with_a_clear_message(client, settings):
    settings.SIGNUP_OPEN = False
    response = client.post(reverse("signup"), {"username": "ada", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 403
    assert "Sign-up is by invitation" in response.content.decode()
    assert not User.objects.filter(username="ada").exists()
    assert "Create an account" not in client.get(reverse("login")).content.decode()


@pytest.mark.django_db
def test_closed_sign_up_still_takes_a_learner_with_an_invite_link(client, settings, course, cohort):
    settings.SIGNUP_OPEN = False
    join = reverse("frontend:cohort_join", args=[cohort.invite_code])
    # The invite link sends a visitor to log in, whose page offers sign-up for this invite.
    login_page = client.get(join, follow=True).content.decode()
    assert "Create an account" in login_page

    response = client.post(
        reverse("signup") + f"?next={join}", {"username": "ada", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302
    ada = User.objects.get(username="ada")
    assert cohort.memberships.filter(user=ada).exists()
    assert client.get(chapter_url(course)).status_code == 200


def _learner_entry_points(course) -> list[tuple[str, str, str, dict]]:
    """(client, method, url, data) for everything a learner does in a course's chapter: the pages,
    the forms they post and the API calls behind the editor and the quiz."""
    chapter = Chapter.objects.get(course=course, slug="one")
    exercise = Exercise.objects.get(chapter=chapter)
    question = Question.objects.get(chapter=chapter)
    choice = question.choices.get(is_correct=False)
    page = lambda name, *args: reverse(f"frontend:{name}", args=[course.slug, *args])  # noqa: E731
    return [
        ("web", "get", page("course"), {}),
        ("web", "get", page("chapter", "one"), {}),
        ("web", "get", page("glossary"), {}),
        ("web", "post", page("quiz_answer", "one"), {"question": question.pk, "choice": choice.pk}),
        ("web", "post", page("place_save", "one"), {"place": "exercise-ex"}),
        ("web", "get", page("course_complete"), {}),
        ("web", "get", page("code_notebook"), {}),
        ("api", "get", f"/api/exercises/{exercise.pk}/code/", {}),
        ("api", "put", f"/api/exercises/{exercise.pk}/code/", {"code": "print(1)"}),
        ("api", "get", f"/api/chapters/{chapter.pk}/quiz/", {}),
        ("api", "post", "/api/quiz/answers/", {"question": question.pk, "choice": choice.pk}),
        ("api", "post", "/api/runs/", {"exercise": exercise.pk, "code": "print(1)"}),
    ]


def _call(clients: dict, target) -> object:
    which, method, url, data = target
    if which == "api":
        return getattr(clients[which], method)(url, data, format="json")
    return getattr(clients[which], method)(url, data)


def _learner_rows(learner) -> dict:
    return {
        "enrolments": Enrolment.objects.filter(user=learner).count(),
        "exercise states": ExerciseState.objects.filter(user=learner).count(),
        "answers": QuizAnswer.objects.filter(user=learner).count(),
        "progress": ChapterProgress.objects.filter(user=learner).count(),
        "runs": Run.objects.filter(user=learner).count(),
    }


@pytest.mark.django_db
def test_an_invite_only_course_admits_no_one_uninvited_through_any_page_form_or_api(client, learner, course, cohort):
    Question.objects.create(chapter=Chapter.objects.get(course=course), position=1, prompt="Which?")
    question = Question.objects.get(chapter__course=course)
    Choice.objects.create(question=question, position=1, text="Right", is_correct=True)
    Choice.objects.create(question=question, position=2, text="Wrong", explanation="Because.")
    api = APIClient()
    api.force_authenticate(learner)
    client.force_login(learner)
    clients = {"web": client, "api": api}

    for target in _learner_entry_points(course):
        response = _call(clients, target)
        assert response.status_code == 403, target
        said = response.json()["detail"] if target[0] == "api" else response.content.decode()
        assert "by invitation" in said, target
    listed = api.get("/api/exercises/").json()
    assert course.slug not in str(listed)
    assert _learner_rows(learner) == dict.fromkeys(_learner_rows(learner), 0)  # nothing written, no one enrolled

    # The same calls, once the learner joined with the invite link, are let through.
    client.post(reverse("frontend:cohort_join", args=[cohort.invite_code]))
    for target in _learner_entry_points(course):
        assert _call(clients, target).status_code < 400, target
    assert Exercise.objects.get(chapter__course=course).pk in [row["id"] for row in api.get("/api/exercises/").json()]

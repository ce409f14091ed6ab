"""Sign-up and enrolment by invitation (issue 11, item 6): a course can be switched to invite-only,
where only learners who joined one of its cohorts with the instructor's invite link open its
chapters and run its exercises; and self sign-up can be closed for the whole site."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import User
from courses.models import Chapter, Course, Enrolment, Exercise
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

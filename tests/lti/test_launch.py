"""Launches from a real platform (lti1p3platform over HTTP): the person found by (issuer, subject),
their role in the course only, the class as a cohort, and where the launch lands."""

from accounts.models import User
from courses.models import Enrolment
from lti.models import ContextCohort, Identity, ResourceLink
from teaching.models import CohortMembership
from tests.lti.conftest import client_launch
from tests.lti.platform import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT


def test_it_signs_a_learner_in_enrols_them_in_the_class_cohort_and_lands_on_the_part(
    client, platform, registered, lti_course
):
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug, "part": "1"})

    response = client_launch(client, platform, user_id="stu-1", link_id="link-1")

    assert response.status_code == 302
    assert response["Location"] == f"/courses/{lti_course.slug}/first-steps/"
    identity = Identity.objects.get(issuer=platform.url, subject="stu-1")
    assert identity.user.role == User.Role.LEARNER
    assert not identity.user.has_usable_password()
    assert Enrolment.objects.filter(user=identity.user, course=lti_course).exists()
    cohort = ContextCohort.objects.get(context__context_id="class-1", course=lti_course).cohort
    assert CohortMembership.objects.filter(cohort=cohort, user=identity.user).exists()
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert identity.user.username.encode() in page.content


def test_it_makes_an_instructor_of_the_class_an_instructor_of_that_course_only(
    client, platform, registered, lti_course
):
    from tests.lti.conftest import course_make

    other = course_make("another-course")
    registered.courses.add(other)
    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug})

    response = client_launch(client, platform, user_id="teach-1", link_id="link-1")

    assert response.status_code == 302
    assert response["Location"] == f"/courses/{lti_course.slug}/"
    user = Identity.objects.get(subject="teach-1").user
    assert user.role == User.Role.INSTRUCTOR
    assert list(user.taught_courses.all()) == [lti_course]
    assert not Enrolment.objects.filter(user=user).exists()
    assert client.get(f"/teach/{lti_course.slug}/").status_code == 200
    assert client.get(f"/teach/{other.slug}/").status_code == 404


def test_a_teaching_assistant_is_an_instructor_but_an_institution_instructor_who_is_a_learner_here_is_not(
    client, platform, registered, lti_course
):
    institution_instructor = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"
    platform.person("ta-1", "Alan Turing", [TEACHING_ASSISTANT])
    platform.person("stu-2", "Emmy Noether", [institution_instructor, LEARNER])
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug, "part": "2"})

    client_launch(client, platform, user_id="ta-1", link_id="link-1")
    client.logout()
    client_launch(client, platform, user_id="stu-2", link_id="link-1")

    assert list(lti_course.instructors.values_list("lti_identities__subject", flat=True)) == ["ta-1"]
    learner = Identity.objects.get(subject="stu-2").user
    assert learner.role == User.Role.LEARNER
    assert Enrolment.objects.filter(user=learner, course=lti_course).exists()


def test_the_same_person_launching_again_is_the_same_account_whatever_their_name_or_email(
    client, platform, registered, lti_course
):
    person = platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug})
    client_launch(client, platform, user_id="stu-1", link_id="link-1")
    first = Identity.objects.get(subject="stu-1").user

    person.name, person.email = "Ada King", "countess@elsewhere.example"
    client.logout()
    client_launch(client, platform, user_id="stu-1", link_id="link-1")

    assert Identity.objects.get(subject="stu-1").user == first
    assert Identity.objects.get(subject="stu-1").name == "Ada King"
    assert User.objects.filter(lti_identities__isnull=False).count() == 1


def test_an_email_the_platform_sends_never_reaches_an_account_made_here(
    client, platform, registered, lti_course, make_user
):
    existing = make_user(username="ada")
    existing.email = "ada@school.example"
    existing.save()
    person = platform.person("ada", "Ada Lovelace", INSTRUCTOR)
    person.email = "ada@school.example"
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug})

    client_launch(client, platform, user_id="ada", link_id="link-1")

    launched = Identity.objects.get(subject="ada").user
    assert launched != existing
    existing.refresh_from_db()
    assert existing.role == User.Role.LEARNER
    assert not lti_course.instructors.filter(pk=existing.pk).exists()


def test_it_lands_on_the_exercise_a_link_names_and_remembers_it_for_the_next_launch(
    client, platform, registered, lti_course
):
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    link = platform.link_add(
        link_id="link-1", custom={"course": lti_course.slug, "part": "first-steps", "exercise": "softmax-by-hand"}
    )

    first = client_launch(client, platform, user_id="stu-1", link_id="link-1")
    link.custom = {}  # the platform no longer sends the custom parameters: the stored target serves
    client.logout()
    second = client_launch(client, platform, user_id="stu-1", link_id="link-1")

    expected = f"/courses/{lti_course.slug}/first-steps/#exercise-softmax-by-hand"
    assert first["Location"] == second["Location"] == expected
    stored = ResourceLink.objects.get(link_id="link-1")
    assert (stored.course, stored.chapter.number, stored.exercise.slug) == (lti_course, 1, "softmax-by-hand")


def test_a_launched_session_may_be_framed_by_the_platform_only_and_keeps_its_cookies_in_the_frame(
    client, platform, registered, lti_course
):
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug, "part": "1"})
    launched = client_launch(client, platform, user_id="stu-1", link_id="link-1")

    page = client.get(launched["Location"])

    assert "X-Frame-Options" not in page
    assert page["Content-Security-Policy"] == f"frame-ancestors 'self' {platform.url}"
    session_cookie = launched.cookies["sessionid"].OutputString()
    assert "SameSite=None" in session_cookie and "Secure" in session_cookie and "Partitioned" in session_cookie
    assert "Partitioned" in page.cookies["csrftoken"].OutputString()
    # A session that did not come from a launch keeps the platform's own framing rule.
    client.logout()
    assert client.get(f"/courses/{lti_course.slug}/")["X-Frame-Options"] in ("DENY", "SAMEORIGIN")

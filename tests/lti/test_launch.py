"""Launches from a real platform (lti1p3platform over HTTP): the person found by (issuer, subject),
their role in the course only, the class as a cohort, and where the launch lands."""

from accounts.models import User
from courses.models import Enrolment
from lti.models import ContextCohort, Identity
from teaching.models import CohortMembership
from tests.lti.conftest import client_launch
from tests.lti.platform import LEARNER


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

"""Names and Role Provisioning: an instructor syncs the LMS class's roster (read from the real
platform with a client-credentials token) into the class's cohort; the dashboards then list
learners who never launched, and no longer list those who left."""

import html

import pytest
from django.test import Client

from courses.models import Enrolment
from lti.models import Context, Identity
from teaching.models import CohortMembership
from tests.lti.conftest import client_launch
from tests.lti.platform import INSTRUCTOR, LEARNER


@pytest.fixture
def taught(client, platform, registered, lti_course):
    """Grace teaches class-1 and launched the course; Ada launched it as a learner; Emmy is on the
    roster and never launched."""
    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.person("stu-2", "Emmy Noether", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug})
    client_launch(Client(), platform, user_id="stu-1", link_id="link-1")
    assert client_launch(client, platform, user_id="teach-1", link_id="link-1").status_code == 302
    return Context.objects.get(context_id="class-1")


def cohort_members(context):
    cohort = context.cohorts.get().cohort
    return set(CohortMembership.objects.filter(cohort=cohort).values_list("user__lti_identities__subject", flat=True))


def test_a_roster_sync_adds_the_learners_who_never_launched_and_the_dashboard_lists_them(
    client, platform, taught, lti_course
):
    assert cohort_members(taught) == {"stu-1"}

    synced = client.post(f"/lti/classes/{taught.pk}/sync/")

    assert synced.status_code == 302
    page = client.get(synced["Location"])
    assert "Roster synced: 1 added, 0 removed" in page.content.decode()
    assert cohort_members(taught) == {"stu-1", "stu-2"}
    emmy = Identity.objects.get(subject="stu-2")
    assert emmy.last_launch_at is None
    assert Enrolment.objects.filter(user=emmy.user, course=lti_course).exists()
    assert not emmy.user.has_usable_password()
    cohort = taught.cohorts.get().cohort
    dashboard = client.get(f"/teach/{lti_course.slug}/?cohort={cohort.pk}")
    assert '<span class="dash-stat-value" data-stat="enrolled">2</span>' in dashboard.content.decode()
    export = client.get(f"/teach/{lti_course.slug}/export/learners.csv?cohort={cohort.pk}")
    listed = b"".join(export.streaming_content).decode()
    assert emmy.user.username in listed and Identity.objects.get(subject="stu-1").user.username in listed
    # The instructor is not a member: the roster's instructors are not learners.
    assert "teach-1" not in cohort_members(taught)


def test_a_member_who_left_the_class_leaves_the_cohort_and_keeps_their_enrolment(client, platform, taught, lti_course):
    client.post(f"/lti/classes/{taught.pk}/sync/")
    platform.people["stu-1"].status = "Inactive"
    platform.classes["class-1"].remove("stu-2")

    client.post(f"/lti/classes/{taught.pk}/sync/")

    assert cohort_members(taught) == set()
    ada = Identity.objects.get(subject="stu-1").user
    assert Enrolment.objects.filter(user=ada, course=lti_course).exists()


def test_a_learner_cannot_sync_the_roster(platform, taught):
    learner = Client()
    client_launch(learner, platform, user_id="stu-1", link_id="link-1")

    assert learner.post(f"/lti/classes/{taught.pk}/sync/").status_code == 404
    assert learner.get("/lti/classes/").status_code == 404
    assert cohort_members(taught) == {"stu-1"}


def test_a_roster_the_platform_cannot_give_is_said_and_changes_nothing(client, platform, taught):
    del platform.classes["class-1"]  # the platform answers 404 for the class's memberships

    answer = client.post(f"/lti/classes/{taught.pk}/sync/")

    assert answer.status_code == 502
    assert "answered HTTP 404 for the roster" in html.unescape(answer.content.decode())
    assert cohort_members(taught) == {"stu-1"}
    assert not Identity.objects.filter(subject="stu-2").exists()

"""Cohorts: made by a course's instructors or admins, joined by invite code, and added in the admin."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from courses.models import Enrolment
from teaching.models import CohortMembership
from teaching.services.cohorts import cohort_create, cohort_join

pytestmark = pytest.mark.django_db


def test_it_makes_a_cohort_with_an_unguessable_invite_code(hand_course):
    cohort = cohort_create(course=hand_course.course, name=" Evening ", created_by=hand_course.admin)
    assert cohort.name == "Evening"
    assert len(cohort.invite_code) >= 12 and cohort.invite_code != hand_course.morning.invite_code


def test_it_refuses_cohorts_from_people_who_do_not_teach_the_course(hand_course):
    for user in (hand_course.other_teacher, hand_course.ann):
        with pytest.raises(PermissionDenied):
            cohort_create(course=hand_course.course, name="Mine", created_by=user)


def test_it_refuses_a_duplicate_or_empty_name(hand_course):
    with pytest.raises(ValidationError):
        cohort_create(course=hand_course.course, name="morning", created_by=hand_course.teacher)
    with pytest.raises(ValidationError):
        cohort_create(course=hand_course.course, name="  ", created_by=hand_course.teacher)


def test_it_lets_a_learner_join_by_invite_code_once_and_enrols_them(hand_course, client):
    outsider, code = hand_course.outsider, hand_course.morning.invite_code
    assert client.get(f"/join/{code}/").status_code == 302  # log in first
    client.force_login(outsider)
    page = client.get(f"/join/{code}/")
    assert page.status_code == 200 and "Join Morning" in page.content.decode()
    assert client.post(f"/join/{code}/").status_code == 302
    assert client.post(f"/join/{code}/").status_code == 302
    assert CohortMembership.objects.filter(cohort=hand_course.morning, user=outsider).count() == 1
    assert Enrolment.objects.filter(user=outsider, course=hand_course.course).exists()
    assert "You are in this cohort" in client.get(f"/join/{code}/").content.decode()
    assert client.get("/join/no-such-code/").status_code == 404


def test_it_raises_for_an_unknown_invite_code(hand_course):
    with pytest.raises(Http404):
        cohort_join(invite_code="nope", user=hand_course.outsider)


def test_it_lets_an_admin_add_members_in_the_admin(hand_course, client):
    cohort = hand_course.morning
    client.force_login(hand_course.admin)
    url = f"/admin/teaching/cohort/{cohort.pk}/change/"
    assert client.get(url).status_code == 200
    members = list(cohort.memberships.all())
    data = {
        "course": hand_course.course.pk,
        "name": cohort.name,
        "invite_code": cohort.invite_code,
        "memberships-TOTAL_FORMS": len(members) + 1,
        "memberships-INITIAL_FORMS": len(members),
        "memberships-MIN_NUM_FORMS": 0,
        "memberships-MAX_NUM_FORMS": 1000,
    }
    for i, membership in enumerate(members):
        data[f"memberships-{i}-id"] = membership.pk
        data[f"memberships-{i}-cohort"] = cohort.pk
        data[f"memberships-{i}-user"] = membership.user_id
    data[f"memberships-{len(members)}-cohort"] = cohort.pk
    data[f"memberships-{len(members)}-user"] = hand_course.outsider.pk
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert cohort.memberships.filter(user=hand_course.outsider).exists()
    assert Enrolment.objects.filter(user=hand_course.outsider, course=hand_course.course).exists()
    assert client.get("/admin/teaching/cohort/add/").status_code == 200

"""Deep Linking 2.0 against the real platform: an instructor picks a part in this tool's page, the
platform validates the signed answer (against the tool's key set) and places a graded link, which
then launches learners onto that part."""

import jwt
import requests

from lti.models import ContextCohort, ResourceLink
from lti.services.keys import key_signing
from tests.lti.conftest import client_launch
from tests.lti.platform import INSTRUCTOR, LEARNER, launch_form


def test_an_instructor_places_a_graded_part_and_a_learner_launches_it(client, platform, registered, lti_course):
    from django.test import Client

    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    platform.person("stu-1", "Ada Lovelace", LEARNER)

    launched = client_launch(client, platform, user_id="teach-1", deep_link_context="class-1")
    assert launched.status_code == 302
    assert launched["Location"] == "/lti/deep-link/"
    page = client.get("/lti/deep-link/")
    assert page.status_code == 200
    assert "Part 1: First steps" in page.content.decode()
    assert "Not yet" not in page.content.decode()  # a draft part is not offered
    answer = client.post("/lti/deep-link/", {"placement": f"{lti_course.slug}/1", "graded": "on"})

    assert answer.status_code == 200
    action, fields = launch_form(answer.content.decode())
    assert action.startswith(f"{platform.url}/deep-link-return")
    assert jwt.get_unverified_header(fields["JWT"])["kid"] == key_signing().kid
    placed_page = requests.post(action, data=fields, timeout=10)
    assert placed_page.status_code == 200, placed_page.text
    [placed] = platform.placed
    assert placed["title"] == "Part 1: First steps (Attention, launched)"
    assert placed["custom"] == {"course": lti_course.slug, "part": "1"}
    assert placed["lineItem"]["scoreMaximum"] == 4  # two exercises and two questions
    assert placed["lineItem"]["label"] == placed["title"]
    assert placed["url"] == "http://testserver/lti/launch/"
    # The instructor now teaches the course, and the class has its cohort of it.
    assert lti_course.instructors.filter(lti_identities__subject="teach-1").exists()
    assert ContextCohort.objects.filter(context__context_id="class-1", course=lti_course).exists()
    # The request is answered once: the page is gone.
    assert client.get("/lti/deep-link/").status_code == 403

    learner = Client()
    landed = client_launch(learner, platform, user_id="stu-1", link_id=placed["link_id"])
    assert landed["Location"] == f"/courses/{lti_course.slug}/first-steps/"
    link = ResourceLink.objects.get(link_id=placed["link_id"])
    assert link.lineitem_url == f"{platform.url}/lineitems/{platform.links[placed['link_id']].lineitem_id}"


def test_an_ungraded_placement_of_an_exercise_carries_no_line_item(client, platform, registered, lti_course):
    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    client_launch(client, platform, user_id="teach-1", deep_link_context="class-1")

    answer = client.post("/lti/deep-link/", {"placement": f"{lti_course.slug}/2/masking"})

    action, fields = launch_form(answer.content.decode())
    requests.post(action, data=fields, timeout=10)
    [placed] = platform.placed
    assert placed["custom"] == {"course": lti_course.slug, "part": "2", "exercise": "masking"}
    assert "lineItem" not in placed


def test_a_pick_the_platform_may_not_place_signs_nothing(client, platform, registered, lti_course):
    from tests.lti.conftest import course_make

    course_make("elsewhere")
    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    client_launch(client, platform, user_id="teach-1", deep_link_context="class-1")

    answer = client.post("/lti/deep-link/", {"placement": "elsewhere/1"})

    assert answer.status_code == 403
    assert 'name="JWT"' not in answer.content.decode()
    assert not ResourceLink.objects.exists()
    assert platform.placed == []

"""Bad launches, each from the real platform with one thing wrong: the page says which check failed,
the status is 4xx where the caller is at fault (502 where the platform's key set cannot be read), a
log line says the same, and nothing is created, enrolled or granted."""

import base64
import html
import json
import logging

import pytest
import requests

from accounts.models import User
from courses.models import Enrolment
from lti.models import Context, Identity, ResourceLink, ScorePost
from teaching.models import Cohort, CohortMembership
from tests.lti.conftest import client_launch, path_of, platform_form
from tests.lti.platform import INSTRUCTOR, LEARNER, TestPlatform, launch_form

MENTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"
INSTITUTION_INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"


def written() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (User, Identity, Enrolment, Cohort, CohortMembership, Context, ResourceLink, ScorePost)
    }


@pytest.fixture
def placed(platform, registered, lti_course):
    platform.person("stu-1", "Ada Lovelace", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug, "part": "1"}, graded=True)
    return platform


@pytest.fixture
def refusal_logged(caplog):
    caplog.set_level(logging.WARNING, logger="lti.views")

    def logged(words: str) -> bool:
        return any(words in record.getMessage() for record in caplog.records if record.name == "lti.views")

    return logged


def tampered(id_token: str, **changes) -> str:
    """The token with its body changed and its signature kept (what a forger can do)."""
    header, body, signature = id_token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims.update(changes)
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


def refused(response, status: int, words: str, *, signed_in: bool = False) -> None:
    page = html.unescape(response.content.decode())
    assert response.status_code == status, page[:800]
    assert words in page
    assert response.wsgi_request.user.is_authenticated == signed_in


def test_a_forged_token_is_refused(client, placed, refusal_logged):
    action, fields = platform_form(client, placed, user_id="stu-1", link_id="link-1")
    before = written()

    response = client.post(path_of(action), {**fields, "id_token": tampered(fields["id_token"], sub="someone-else")})

    refused(response, 403, "forged")
    assert written() == before
    assert refusal_logged("forged")


def test_a_token_signed_with_a_key_the_platform_does_not_publish_is_refused(client, placed):
    from tests.lti.platform import new_private_key

    placed.forging_key = new_private_key()
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="link-1")

    refused(response, 403, "forged")
    assert "Unable to find public key" in response.content.decode()
    assert written() == before


def test_an_expired_token_is_refused(client, placed, refusal_logged):
    placed.id_token_expiration = -120
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="link-1")

    refused(response, 403, "expired")
    assert written() == before
    assert refusal_logged("expired")


def test_a_replayed_token_is_refused_the_second_time_whoever_posts_it(client, placed, django_user_model):
    from django.test import Client

    action, fields = platform_form(client, placed, user_id="stu-1", link_id="link-1")
    assert client.post(path_of(action), fields).status_code == 302
    after_first = written()

    again = client.post(path_of(action), fields)
    elsewhere = Client().post(path_of(action), fields)

    refused(again, 403, "replayed", signed_in=True)  # still the first launch's session, nothing more
    refused(elsewhere, 403, "replayed")
    assert written() == after_first


def test_a_token_for_another_audience_is_refused(client, placed, refusal_logged):
    placed.token_audience = "another-tool"
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="link-1")

    refused(response, 403, "wrong audience")
    assert written() == before
    assert refusal_logged("wrong audience")


def test_an_unknown_issuer_is_refused_at_login_and_at_launch(client, placed, refusal_logged):
    stranger = TestPlatform().start()
    try:
        stranger.tool("http://testserver")
        stranger.person("stu-1", "Ada Lovelace", LEARNER)
        stranger.link_add(link_id="link-1", custom={"course": "lti-course"})
        before = written()

        at_login = client.get(path_of(stranger.login_url(user_id="stu-1", link_id="link-1")))
        # Its token, posted straight to the launch (no login here could have started it).
        preflight = {
            "client_id": stranger.client_id,
            "redirect_uri": "http://testserver/lti/launch/",
            "login_hint": "stu-1",
            "lti_message_hint": "link:link-1",
            "state": "state-made-up",
            "nonce": "nonce-made-up",
        }
        _, fields = launch_form(requests.get(f"{stranger.url}/auth", params=preflight, timeout=10).text)
        at_launch = client.post("/lti/launch/", fields)
    finally:
        stranger.stop()

    refused(at_login, 403, "No learning system is registered")
    refused(at_launch, 403, "No learning system is registered")
    assert stranger.url in at_launch.content.decode()
    assert written() == before
    assert refusal_logged("No learning system is registered")


def test_an_unknown_deployment_is_refused_at_login_and_at_launch(client, placed):
    before = written()
    placed.deployment_id = "deployment-unknown"
    at_login = client.get(path_of(placed.login_url(user_id="stu-1", link_id="link-1")))
    placed.deployment_id = "deployment-1"
    placed.token_deployment_id = "deployment-unknown"
    at_launch = client_launch(client, placed, user_id="stu-1", link_id="link-1")

    refused(at_login, 403, "deployment-unknown")
    refused(at_launch, 403, "deployment-unknown")
    assert "is not registered" in at_launch.content.decode()
    assert written() == before


@pytest.mark.parametrize(
    ("roles", "words"),
    [
        ([], "carries no role"),
        ([MENTOR], "no role this tool knows"),
        ([INSTITUTION_INSTRUCTOR], "no role this tool knows"),
    ],
    ids=["missing", "unknown", "institution-only"],
)
def test_a_launch_without_a_role_this_tool_knows_is_refused(client, placed, roles, words):
    placed.person("odd-1", "Someone Else", roles)
    before = written()

    response = client_launch(client, placed, user_id="odd-1", link_id="link-1")

    refused(response, 403, words)
    assert written() == before


def test_a_platform_whose_key_set_is_down_gets_a_502_that_says_so(client, placed, refusal_logged):
    placed.jwks_status = 503
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="link-1")

    refused(response, 502, "key set could not be read")
    assert f"{placed.url}/jwks" in response.content.decode()
    assert written() == before
    assert refusal_logged("key set")


@pytest.mark.parametrize(
    ("custom", "status", "words"),
    [
        ({"course": "no-such-course"}, 404, "course this platform does not have"),
        ({"course": "lti-course", "part": "9"}, 404, "has no part '9'"),
        ({"course": "lti-course", "part": "3"}, 404, "not published yet"),
        ({"course": "lti-course", "part": "1", "exercise": "nope"}, 404, "has no exercise 'nope'"),
        ({}, 400, "does not say what to open"),
    ],
    ids=["unknown-course", "unknown-part", "draft-part", "unknown-exercise", "nothing-named"],
)
def test_a_link_naming_what_the_course_does_not_have_is_refused(client, placed, custom, status, words):
    placed.link_add(link_id="odd-link", custom=custom)
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="odd-link")

    refused(response, status, words)
    assert written() == before


def test_a_course_the_registration_does_not_list_is_refused(client, placed, registered):
    from tests.lti.conftest import course_make

    course_make("not-for-this-lms")
    placed.link_add(link_id="other", custom={"course": "not-for-this-lms"})
    before = written()

    response = client_launch(client, placed, user_id="stu-1", link_id="other")

    refused(response, 403, "may not open the course")
    assert written() == before


def test_a_switched_off_registration_is_refused(client, placed, registered):
    registered.is_active = False
    registered.save()
    before = written()

    response = client.get(path_of(placed.login_url(user_id="stu-1", link_id="link-1")))

    refused(response, 403, "No learning system is registered")
    assert written() == before


def test_a_launch_that_did_not_start_here_is_refused(client, placed):
    action, fields = platform_form(client, placed, user_id="stu-1", link_id="link-1")
    before = written()

    response = client.post(path_of(action), {**fields, "state": "state-from-elsewhere"})

    refused(response, 403, "did not start with a login at this tool")
    assert written() == before


def test_a_browser_that_kept_no_cookie_in_the_frame_is_offered_a_new_window_which_works(client, placed, lti_course):
    from django.test import Client

    action, fields = platform_form(client, placed, user_id="stu-1", link_id="link-1")
    before = written()

    # The launch comes back without the state cookie (a browser that keeps none in the iframe).
    response = Client().post(path_of(action), fields)

    assert response.status_code == 200
    assert "Open in a new window" in response.content.decode()
    assert written() == before
    new_window = response.context["login_url"]
    assert "lti1p3_new_window=1" in new_window
    # In the new window the tool is the first party: the same login, started again, goes through.
    window = Client()
    login = window.get(path_of(new_window))
    _, again = launch_form(requests.get(login["Location"], timeout=10).text)
    landed = window.post("/lti/launch/", again)
    assert landed.status_code == 302
    assert landed["Location"] == f"/courses/{lti_course.slug}/first-steps/"


def test_only_an_instructor_may_deep_link(client, placed, lti_course):
    placed.class_add("class-1")
    before = written()

    as_learner = client_launch(client, placed, user_id="stu-1", deep_link_context="class-1")
    picked = client.post("/lti/deep-link/", {"placement": lti_course.slug, "graded": "on"})

    refused(as_learner, 403, "Only the class's instructors place")
    assert picked.status_code == 403
    assert "JWT" not in picked.content.decode()
    assert written() == before


def test_a_launched_learner_cannot_answer_a_deep_linking_request(client, placed, lti_course):
    """A learner signed in by a resource launch posts the deep linking form: nothing is signed, they
    gain no course."""
    placed.person("teach-1", "Grace Hopper", INSTRUCTOR)
    assert client_launch(client, placed, user_id="stu-1", link_id="link-1").status_code == 302
    learner = Identity.objects.get(subject="stu-1").user
    before = written()

    picked = client.post("/lti/deep-link/", {"placement": lti_course.slug, "graded": "on"})

    refused_page = picked.content.decode()
    assert picked.status_code == 403
    assert "No deep linking request of yours is open" in refused_page
    assert 'name="JWT"' not in refused_page
    assert not lti_course.instructors.filter(pk=learner.pk).exists()
    assert written() == before

"""An admin registers a learning system in the Django admin, with the tool's URLs to paste shown
on the same page, and sees the LMS classes and their roster sync there."""

from lti.models import Deployment, Platform
from tests.lti.conftest import client_launch
from tests.lti.platform import INSTRUCTOR, LEARNER


def test_an_admin_registers_a_platform_with_its_deployments_and_courses(admin_client, lti_course):
    form = admin_client.get("/admin/lti/platform/add/")
    page = form.content.decode()
    for path in ("/lti/login/", "/lti/launch/", "/lti/jwks/"):
        assert f"http://testserver{path}" in page

    saved = admin_client.post(
        "/admin/lti/platform/add/",
        {
            "name": "Canvas",
            "is_active": "on",
            "courses": [lti_course.pk],
            "issuer": "https://canvas.instructure.com",
            "client_id": "10000000000042",
            "auth_login_url": "https://sso.canvaslms.com/api/lti/authorize_redirect",
            "token_url": "https://sso.canvaslms.com/login/oauth2/token",
            "keyset_url": "https://sso.canvaslms.com/api/lti/security/jwks",
            "token_audience": "",
            "frame_origins": "https://school.instructure.com",
            "deployments-TOTAL_FORMS": "2",
            "deployments-INITIAL_FORMS": "0",
            "deployments-MIN_NUM_FORMS": "0",
            "deployments-MAX_NUM_FORMS": "1000",
            "deployments-0-deployment_id": "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb",
            "deployments-1-deployment_id": "",
        },
    )

    assert saved.status_code == 302, saved.content.decode()[:2000]
    platform = Platform.objects.get(client_id="10000000000042")
    assert list(platform.courses.all()) == [lti_course]
    assert list(Deployment.objects.filter(platform=platform).values_list("deployment_id", flat=True)) == [
        "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"
    ]
    assert platform.frame_origin_list() == [
        "https://canvas.instructure.com",
        "https://sso.canvaslms.com",
        "https://school.instructure.com",
    ]


def test_the_same_client_of_an_issuer_is_registered_once(admin_client, registered):
    again = admin_client.post(
        "/admin/lti/platform/add/",
        {
            "name": "Twice",
            "issuer": registered.issuer,
            "client_id": registered.client_id,
            "auth_login_url": registered.auth_login_url,
            "token_url": registered.token_url,
            "keyset_url": registered.keyset_url,
            "deployments-TOTAL_FORMS": "0",
            "deployments-INITIAL_FORMS": "0",
            "deployments-MIN_NUM_FORMS": "0",
            "deployments-MAX_NUM_FORMS": "1000",
        },
    )

    assert again.status_code == 200
    assert "already has a registration with this client ID" in again.content.decode()
    assert Platform.objects.count() == 1


def test_an_admin_syncs_a_class_roster_from_the_admin(admin_client, platform, registered, lti_course):
    from django.test import Client

    from lti.models import Context

    platform.person("teach-1", "Grace Hopper", INSTRUCTOR)
    platform.person("stu-2", "Emmy Noether", LEARNER)
    platform.link_add(link_id="link-1", custom={"course": lti_course.slug})
    client_launch(Client(), platform, user_id="teach-1", link_id="link-1")
    context = Context.objects.get()

    answer = admin_client.post(
        "/admin/lti/context/", {"action": "sync_roster", "_selected_action": [context.pk]}, follow=True
    )

    assert "1 learners, 1 added, 0 removed" in answer.content.decode()

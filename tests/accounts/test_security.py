"""Accounts as a security reviewer would have them (issue 11, item 6): failed logins lock out on
every login path until an admin lifts the lock, proxy headers count only from trusted proxies, API
tokens expire, a demoted admin loses the admin's rights, demo accounts only where DEBUG is on."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-1"


def token_request(client, username, password, **headers):
    return client.post("/api/auth/token/", {"username": username, "password": password}, format="json", **headers)


# --- lockout ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_token_requests_lock_out_after_five_failures_with_a_json_detail(learner):
    api = APIClient()
    for _ in range(4):
        assert token_request(api, learner.username, "wrong").status_code == 400
    locked = token_request(api, learner.username, "wrong")
    assert locked.status_code == 429
    assert "Too many failed attempts" in locked.json()["detail"]
    assert int(locked["Retry-After"]) > 0

    # The right password does not get through a lockout either.
    still = token_request(api, learner.username, PASSWORD)
    assert still.status_code == 429
    assert "token" not in still.json()


@pytest.mark.django_db
def test_the_admin_login_locks_out_after_five_failures(client, admin_user):
    for _ in range(5):
        response = client.post("/admin/login/", {"username": admin_user.username, "password": "wrong"})
    assert response.status_code == 429
    response = client.post("/admin/login/", {"username": admin_user.username, "password": PASSWORD})
    assert response.status_code == 429
    assert "Too many failed attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_guesses_at_one_username_from_many_addresses_lock_it_whatever_its_case(client, learner):
    spellings = ["  " + learner.username.upper(), learner.username.title(), learner.username, learner.username + " "]
    for n, name in enumerate([*spellings, learner.username]):
        client.post(reverse("login"), {"username": name, "password": "wrong"}, REMOTE_ADDR=f"203.0.113.{n}")
    response = client.post(
        reverse("login"), {"username": learner.username, "password": PASSWORD}, REMOTE_ADDR="203.0.113.99"
    )
    assert response.status_code == 429


@pytest.mark.django_db
def test_an_admin_lifts_a_lockout_from_the_admin(client, learner, admin_user):
    api = APIClient()
    for _ in range(5):
        token_request(api, learner.username, "wrong")
    assert token_request(api, learner.username, PASSWORD).status_code == 429

    client.force_login(admin_user)
    response = client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "lift_login_lockout", "_selected_action": [learner.pk]},
        follow=True,
    )
    assert f"Login lockout lifted for {learner.username}" in response.content.decode()

    granted = token_request(api, learner.username, PASSWORD)
    assert granted.status_code == 200
    assert granted.json()["token"] == Token.objects.get(user=learner).key


# --- proxy headers ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_forged_x_forwarded_for_does_not_dodge_the_address_lockout(client, settings, make_user):
    """Password spraying from one address: a new username and a new X-Forwarded-For per guess."""
    settings.TRUSTED_PROXIES = []
    users = [make_user() for _ in range(6)]
    for n, user in enumerate(users[:5]):
        client.post(
            reverse("login"), {"username": user.username, "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}"
        )
    last = client.post(
        reverse("login"), {"username": users[5].username, "password": PASSWORD}, HTTP_X_FORWARDED_FOR="198.51.100.99"
    )
    assert last.status_code == 429


@pytest.mark.django_db
def test_a_trusted_proxy_reports_each_clients_address(client, settings, make_user):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    users = [make_user() for _ in range(6)]
    for n, user in enumerate(users[:5]):
        client.post(
            reverse("login"), {"username": user.username, "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}"
        )
    last = client.post(
        reverse("login"), {"username": users[5].username, "password": PASSWORD}, HTTP_X_FORWARDED_FOR="198.51.100.99"
    )
    assert last.status_code == 302, "another client behind the proxy is not locked out"


@pytest.mark.django_db
@pytest.mark.parametrize(("proxies", "expected"), [([], 301), (["127.0.0.0/8"], 200)])
def test_x_forwarded_proto_counts_only_from_a_trusted_proxy(client, settings, proxies, expected):
    settings.TRUSTED_PROXIES = proxies
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    response = client.get(reverse("login"), HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == expected


# --- API tokens -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_expired_token_answers_401_and_a_token_request_issues_a_fresh_one(learner, settings):
    settings.API_TOKEN_TTL_DAYS = 30
    api = APIClient()
    old = token_request(api, learner.username, PASSWORD).json()["token"]
    assert token_request(api, learner.username, PASSWORD).json() == {"token": old}, "a live token is kept"
    Token.objects.filter(key=old).update(created=timezone.now() - timedelta(days=31))

    api.credentials(HTTP_AUTHORIZATION=f"Token {old}")
    expired = api.get("/api/exercises/")
    assert expired.status_code == 401
    assert "expired" in expired.json()["detail"]

    api.credentials()
    fresh = token_request(api, learner.username, PASSWORD).json()["token"]
    assert fresh != old
    api.credentials(HTTP_AUTHORIZATION=f"Token {fresh}")
    assert api.get("/api/exercises/").status_code == 200


# --- roles ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_admin_demoted_in_the_admin_loses_superuser_and_staff(client, make_user):
    boss, demoted = make_user(User.Role.ADMIN), make_user(User.Role.ADMIN)
    client.force_login(boss)
    url = reverse("admin:accounts_user_change", args=[demoted.pk])
    response = client.post(
        url,
        {
            "username": demoted.username,
            "first_name": "",
            "last_name": "",
            "email": "",
            "is_active": "on",
            # Ticked, as the form showed them for an admin: the role decides, not these boxes.
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "last_login_0": "",
            "last_login_1": "",
            "role": User.Role.LEARNER,
            "theme": User.Theme.SYSTEM,
            "_save": "Save",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    demoted.refresh_from_db()
    assert demoted.role == User.Role.LEARNER
    assert not demoted.is_superuser and not demoted.is_staff

    client.force_login(demoted)
    assert client.get("/admin/").status_code == 302, "the admin site sends a non-staff user to its login"


@pytest.mark.django_db
def test_createsuperuser_makes_an_admin():
    user = User.objects.create_superuser("root", "root@example.org", "a-long-pass-phrase")
    assert user.role == User.Role.ADMIN and user.is_superuser and user.is_staff


# --- demo accounts ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_demo_accounts_refuse_to_run_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="only with DEBUG on"):
        call_command("demo_accounts")
    assert not User.objects.filter(username="admin").exists()

    settings.DEBUG = True
    call_command("demo_accounts")
    assert User.objects.get(username="admin").is_superuser


def test_demo_accounts_exit_non_zero_with_production_settings():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        DJANGO_SETTINGS_MODULE="ecplatform.settings.production", SECRET_KEY="k" * 20 + "Zq8!xP2@mV5#nB7$" + "w" * 20
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "demo_accounts"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode != 0
    assert "only with DEBUG on" in out.stderr

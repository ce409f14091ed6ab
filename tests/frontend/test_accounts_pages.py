"""Account pages: sign up, log in and out, password change and reset, in the site's layout."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "name", ["signup", "login", "password_reset", "password_reset_done", "password_reset_complete"]
)
def test_it_serves_the_account_pages_to_visitors(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    assert "EasyCompilers" in response.content.decode()
    assert response.content.decode().count("<h1") == 1


def test_it_signs_a_visitor_up_and_logs_them_in(client):
    form = client.get(reverse("signup")).content.decode()
    assert 'for="id_username"' in form and 'for="id_password1"' in form
    response = client.post(
        reverse("signup"),
        {
            "username": "ada",
            "email": "ada@example.com",
            "password1": "a long pass phrase",
            "password2": "a long pass phrase",
        },
        follow=True,
    )
    assert User.objects.get(username="ada").role == User.Role.LEARNER
    assert "ada" in response.content.decode() and "Log out" in response.content.decode()


def test_it_shows_form_errors_next_to_their_fields(client):
    page = client.post(reverse("signup"), {"username": "", "password1": "x", "password2": "y"}).content.decode()
    assert 'class="errorlist' in page


def test_it_logs_in_and_out_through_the_header_form(client, make_user):
    user = make_user(username="grace", password="pw-for-tests-1")
    response = client.post(reverse("login"), {"username": "grace", "password": "pw-for-tests-1"}, follow=True)
    assert "grace" in response.content.decode()
    response = client.post(reverse("logout"), follow=True)
    assert reverse("login") in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert user.pk


def test_it_changes_a_password_for_a_logged_in_user_only(client, learner):
    assert client.get(reverse("password_change")).status_code == 302
    client.force_login(learner)
    assert client.get(reverse("password_change")).status_code == 200
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "pw-for-tests-1",
            "new_password1": "another long phrase",
            "new_password2": "another long phrase",
        },
        follow=True,
    )
    assert "Password changed" in response.content.decode()


def test_it_sends_a_reset_link_that_opens_the_new_password_form(client, make_user):
    user = make_user()
    user.email = "reset@example.com"
    user.save()
    client.post(reverse("password_reset"), {"email": "reset@example.com"})
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^\s]+/reset/[^\s]+/", mail.outbox[0].body).group(0)
    page = client.get(link, follow=True).content.decode()
    assert "Choose a new password" in page

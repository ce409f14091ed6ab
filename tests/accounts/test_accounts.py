import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User


@pytest.mark.django_db
def test_it_signs_up_and_logs_the_learner_in(client):
    response = client.post(
        reverse("signup"),
        {"username": "ada", "email": "", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
    )
    assert response.status_code == 302
    user = User.objects.get(username="ada")
    assert user.role == User.Role.LEARNER and not user.is_staff
    assert client.get(reverse("frontend:catalog")).context["user"] == user


@pytest.mark.django_db
@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x"])
def test_it_never_redirects_off_site_after_signup(client, target):
    response = client.post(
        reverse("signup") + f"?next={target}",
        {"username": "ada", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:catalog")


@pytest.mark.django_db
def test_it_returns_to_a_page_on_this_site_after_signup(client):
    response = client.post(
        reverse("signup") + "?next=/courses/x/",
        {"username": "ada", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
    )
    assert response["Location"] == "/courses/x/"


@pytest.mark.django_db
def test_it_throttles_failed_logins(client, learner):
    for _ in range(4):
        response = client.post(reverse("login"), {"username": learner.username, "password": "wrong"})
        assert "Please enter a correct username" in response.content.decode()
    response = client.post(reverse("login"), {"username": learner.username, "password": "wrong"})
    assert response.status_code == 429
    response = client.post(reverse("login"), {"username": learner.username, "password": "pw-for-tests-1"})
    assert response.status_code == 429
    assert "Too many failed attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_it_logs_in_logs_out_and_changes_the_password(client, learner):
    assert (
        client.post(reverse("login"), {"username": learner.username, "password": "pw-for-tests-1"}).status_code == 302
    )
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "pw-for-tests-1",
            "new_password1": "another-long-phrase",
            "new_password2": "another-long-phrase",
        },
    )
    assert response.status_code == 302
    client.post(reverse("logout"))
    assert "_auth_user_id" not in client.session
    assert client.login(username=learner.username, password="another-long-phrase")


@pytest.mark.django_db
def test_it_emails_a_password_reset_link(client, learner):
    learner.email = "ada@example.org"
    learner.save()
    client.post(reverse("password_reset"), {"email": "ada@example.org"})
    assert len(mail.outbox) == 1
    assert "/accounts/reset/" in mail.outbox[0].body


@pytest.mark.django_db
def test_the_admin_role_carries_staff_and_superuser(make_user):
    admin = make_user(User.Role.ADMIN)
    assert admin.is_staff and admin.is_superuser
    instructor = make_user(User.Role.INSTRUCTOR)
    assert not instructor.is_staff

"""The theme: the system's by default, a learner's choice saved on their profile and put on <html>
by the server, so the page never flashes the wrong colours."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_it_follows_the_system_until_the_learner_chooses(client, learner, course):
    assert '<html lang="en" data-theme="system">' in client.get("/").content.decode()
    client.force_login(learner)
    page = client.get("/").content.decode()
    assert 'data-theme="system" data-theme-account' in page
    assert '<option value="system" selected>' in page


def test_it_saves_the_choice_on_the_profile_and_renders_it_on_html(client, learner, course):
    client.force_login(learner)
    chapter = reverse("frontend:chapter", args=[course.slug, course.chapters.get(number=2).slug])
    response = client.post(reverse("frontend:theme_save"), {"theme": "dark", "next": chapter})
    assert response.status_code == 302 and response["Location"] == chapter
    learner.refresh_from_db()
    assert learner.theme == "dark"
    page = client.get(chapter).content.decode()
    assert '<html lang="en" data-theme="dark"' in page and '<option value="dark" selected>' in page
    # theme.js saves without leaving the page.
    response = client.post(reverse("frontend:theme_save"), {"theme": "light"}, headers={"X-Fragment": "theme"})
    assert response.status_code == 204
    learner.refresh_from_db()
    assert learner.theme == "light"


def test_it_refuses_unknown_themes_and_foreign_redirects(client, learner):
    client.force_login(learner)
    assert client.post(reverse("frontend:theme_save"), {"theme": "neon"}).status_code == 400
    response = client.post(reverse("frontend:theme_save"), {"theme": "dark", "next": "https://example.com/"})
    assert response["Location"] == reverse("frontend:catalog")


def test_it_keeps_a_visitors_choice_in_the_browser_only(client):
    page = client.get("/").content.decode()
    assert "data-theme-form hidden" in page  # shown by theme.js, which keeps it in localStorage
    response = client.post(reverse("frontend:theme_save"), {"theme": "dark", "next": "/"})
    assert response.status_code == 302
    assert '<html lang="en" data-theme="system">' in client.get("/").content.decode()

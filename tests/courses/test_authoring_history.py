"""History and revert in the admin: who changed what and when, a diff, and one click back.
A chapter's revision holds the exercises saved with it, so reverting the chapter restores them."""

import pytest
from django.urls import reverse
from reversion.models import Version

from courses.models import Exercise, GlossaryTerm
from courses.services.content_io import course_import
from tests.courses.test_admin import _form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def course(course_dir, settings):
    settings.RUNNER_BACKEND = "local"
    return course_import(path=course_dir).course


def _post_change(client, obj, model: str, **changes):
    url = reverse(f"admin:courses_{model}_change", args=[obj.pk])
    data = _form_data(client.get(url))
    data.update(changes)
    return client.post(url, data)


def test_it_lists_who_changed_a_term_with_a_diff_and_reverts_it(client, admin_user, course):
    client.force_login(admin_user)
    term = course.glossary.first()
    before = term.definition

    _post_change(client, term, "glossaryterm", definition="A wrong definition.")
    page = client.get(reverse("admin:courses_glossaryterm_history", args=[term.pk])).content.decode()

    assert f"by {admin_user.username}" in page
    assert "-" + before in page and "+A wrong definition." in page
    baseline = Version.objects.get_for_object(term).last()
    response = client.post(reverse("admin:courses_glossaryterm_revert", args=[term.pk, baseline.pk]), follow=True)

    assert GlossaryTerm.objects.get(pk=term.pk).definition == before
    assert "Reverted" in response.content.decode()
    assert Version.objects.get_for_object(term).count() == 3  # the revert is itself in the history


def test_reverting_a_chapter_restores_the_exercises_saved_with_it(client, admin_user, course):
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="first-steps")
    chapter.published = False
    chapter.save()
    exercise = chapter.exercises.get()
    original = exercise.check_code

    _post_change(client, chapter, "chapter", **{"exercises-0-check_code": "def check(ns):\n    return False, 'no'\n"})
    assert "return False" in Exercise.objects.get(pk=exercise.pk).check_code
    page = client.get(reverse("admin:courses_chapter_history", args=[chapter.pk])).content.decode()
    assert "+    return False, &#x27;no&#x27;" in page
    assert "Revert to this version" in page

    baseline = Version.objects.get_for_object(chapter).last()
    client.post(reverse("admin:courses_chapter_revert", args=[chapter.pk, baseline.pk]))

    assert Exercise.objects.get(pk=exercise.pk).check_code == original


def test_learners_cannot_open_the_history(client, learner, course):
    client.force_login(learner)
    term = course.glossary.first()
    response = client.get(reverse("admin:courses_glossaryterm_history", args=[term.pk]))
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))

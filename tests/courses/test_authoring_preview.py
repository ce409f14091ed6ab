"""The chapter body's live preview in the admin: the learner page's renderer on the typed text,
with unknown glossary terms and broken maths named by line; admins only."""

import pytest
from django.urls import reverse

from courses.services.content_io import course_import

pytestmark = pytest.mark.django_db
URL = "admin:courses_chapter_preview_body"
BODY = "A first line about [[attention]] and $q \\cdot k$.\n\nThen [[nonsense]] here.\n\nAnd $\\frac{1}{$ broken.\n"


@pytest.fixture
def chapter(course_dir):
    return course_import(path=course_dir).course.chapters.get(slug="first-steps")


def test_it_renders_the_typed_body_with_popovers_and_maths_and_flags_problems(client, admin_user, chapter):
    client.force_login(admin_user)

    data = client.post(reverse(URL), {"body": BODY, "chapter": chapter.pk}).json()

    assert 'popovertarget="t-1"' in data["html"] and "A weighted blend of value vectors." in data["html"]
    assert "<math" in data["html"] and 'class="math-error"' in data["html"]
    assert data["problems"][0] == {"line": 3, "problem": "[[nonsense]] names no glossary term ('nonsense')"}
    assert data["problems"][1]["line"] == 5 and "maths" in data["problems"][1]["problem"]


def test_it_places_the_chapters_exercises_at_their_markers(client, admin_user, chapter):
    client.force_login(admin_user)

    data = client.post(reverse(URL), {"body": "Intro.\n\n[[exercise:make-a-tensor]]\n", "chapter": chapter.pk}).json()

    assert 'data-exercise-slug="make-a-tensor"' in data["html"] and "Make a tensor" in data["html"]


def test_learners_get_no_preview(client, learner, chapter):
    client.force_login(learner)
    response = client.post(reverse(URL), {"body": BODY, "chapter": chapter.pk})
    assert response.status_code == 302

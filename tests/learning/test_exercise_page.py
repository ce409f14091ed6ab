"""The chapter page as the editor script finds it: each exercise's starter code, the learner's
own saved code, a Done badge from the first pass, and a Run that needs a signed-in learner."""

import json
import re

import pytest
from django.urls import reverse

from courses.models import Chapter, Course, Exercise
from courses.services.progress import exercise_code_save, exercise_record_pass

pytestmark = pytest.mark.django_db

STARTER = "print('</script><b>starter</b>')\n"


@pytest.fixture
def chapter():
    course = Course.objects.create(slug="page-course", title="Page course", published=True)
    chapter = Chapter.objects.create(
        course=course,
        number=1,
        slug="one",
        title="One",
        published=True,
        body="Text.\n\n[[exercise:first]]\n\nMore.\n\n[[exercise:second]]\n",
    )
    Exercise.objects.create(chapter=chapter, slug="first", title="First", position=1, starter_code=STARTER)
    Exercise.objects.create(chapter=chapter, slug="second", title="Second", position=2, starter_code="x = 1\n")
    return chapter


def _page(client, chapter) -> str:
    response = client.get(reverse("frontend:chapter", args=[chapter.course.slug, chapter.slug]))
    assert response.status_code == 200
    return response.content.decode()


def _json_script(html: str, element_id: str):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    return None if match is None else json.loads(match.group(1))


def _done_badges(html: str) -> list[bool]:
    """Per exercise, in page order: whether its Done badge is shown."""
    return ["hidden" not in tag for tag in re.findall(r"<p class=\"exercise-done\"[^>]*>", html)]


def test_it_gives_the_editor_the_starter_code_safely_embedded(client, chapter, learner):
    client.force_login(learner)
    html = _page(client, chapter)
    assert _json_script(html, "exercise-first-starter") == STARTER
    assert "<b>starter</b>')" not in html.split("exercise-first-starter")[1].split("</script>")[0]
    assert _json_script(html, "exercise-first-saved") is None


def test_it_gives_the_editor_the_learners_saved_code_and_nobody_elses(client, chapter, make_user):
    alice, bob = make_user(), make_user()
    first = chapter.exercises.get(slug="first")
    exercise_code_save(user=alice, exercise=first, code="print('alice')\n")
    client.force_login(alice)
    assert _json_script(_page(client, chapter), "exercise-first-saved") == "print('alice')\n"
    client.force_login(bob)
    html = _page(client, chapter)
    assert _json_script(html, "exercise-first-saved") is None
    assert "alice')" not in html


def test_it_shows_done_on_the_exercises_whose_check_passed(client, chapter, make_user):
    alice, bob = make_user(), make_user()
    exercise_record_pass(user=alice, exercise=chapter.exercises.get(slug="second"))
    client.force_login(alice)
    assert _done_badges(_page(client, chapter)) == [False, True]
    client.force_login(bob)
    assert _done_badges(_page(client, chapter)) == [False, False]


def test_it_lets_signed_in_learners_run_and_invites_visitors_to_log_in(client, chapter, learner):
    html = _page(client, chapter)
    assert "data-can-run" not in html and "data-csrf" not in html
    login = reverse("login") + "?next=" + reverse("frontend:chapter", args=[chapter.course.slug, chapter.slug])
    assert html.count(f'data-login-url="{login}"') == 2
    client.force_login(learner)
    html = _page(client, chapter)
    assert html.count("data-can-run") == 2 and "data-csrf=" in html


def test_it_keeps_the_starter_listing_and_output_pane_for_pages_without_scripts(client, chapter):
    html = _page(client, chapter)
    assert html.count('Click "Run" to execute your code') == 2
    assert html.count('class="exercise-code"') == 2
    assert 'aria-live="polite"' in html
    assert 'src="/static/dist/learn.js"' in html and 'type="module"' in html

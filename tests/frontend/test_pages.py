"""The reading pages for anonymous visitors, learners, instructors and admins."""

import re

import pytest
from django.urls import reverse

from accounts.models import User
from tests.frontend.conftest import course_build

pytestmark = pytest.mark.django_db


def chapter_url(course, number):
    return reverse("frontend:chapter", args=[course.slug, course.chapters.get(number=number).slug])


def login(client, user):
    client.force_login(user)
    return client


@pytest.fixture(params=["anonymous", "learner", "instructor", "admin"])
def any_client(request, client, make_user):
    if request.param != "anonymous":
        client.force_login(make_user(request.param))
    return client


def test_it_lists_published_courses_in_the_catalog_with_level_parts_and_reading_time(any_client, course):
    page = any_client.get(reverse("frontend:catalog")).content.decode()
    assert "Transformers from the ground up" in page
    assert "Advanced" in page
    assert "10 parts" in page
    minutes = sum(c.reading_minutes for c in course.chapters.filter(published=True))
    assert f"{minutes} min read" in page
    assert "<title>Courses · EasyCompilers</title>" in page


def test_it_shows_the_outline_with_coming_soon_parts_that_cannot_be_opened(client, course):
    page = client.get(reverse("frontend:course", args=[course.slug])).content.decode()
    assert page.count("Coming soon") == 8
    assert "Part 2 of 10" in page
    assert f'href="{chapter_url(course, 2)}"' in page
    assert f'href="{chapter_url(course, 4)}"' in page
    assert f'href="{chapter_url(course, 1)}"' not in page
    assert "One line about attention by hand." in page


@pytest.mark.parametrize("role", ["anonymous", "learner", "instructor"])
def test_it_answers_404_for_a_coming_soon_part_to_everyone_but_staff_and_its_instructors(
    client, make_user, course, role
):
    if role != "anonymous":
        client.force_login(make_user(role))
    assert client.get(chapter_url(course, 1)).status_code == 404
    assert client.get(chapter_url(course, 2)).status_code == 200


def test_it_opens_unpublished_parts_for_admins_and_the_courses_instructors(client, make_user, course):
    teacher = make_user(User.Role.INSTRUCTOR)
    course.instructors.add(teacher)
    for user in (make_user(User.Role.ADMIN), teacher):
        client.force_login(user)
        assert client.get(chapter_url(course, 1)).status_code == 200
        assert "Not published" in client.get(reverse("frontend:course", args=[course.slug])).content.decode()


@pytest.mark.parametrize("role", ["anonymous", "learner", "instructor"])
def test_it_hides_an_unpublished_course_from_everyone_but_staff(client, make_user, role):
    hidden = course_build(slug="draft-course", published=False)
    if role != "anonymous":
        client.force_login(make_user(role))
    assert client.get(reverse("frontend:course", args=[hidden.slug])).status_code == 404
    assert client.get(reverse("frontend:glossary", args=[hidden.slug])).status_code == 404
    assert client.get(chapter_url(hidden, 2)).status_code == 404
    assert "draft-course" not in client.get(reverse("frontend:catalog")).content.decode()


def test_it_shows_an_unpublished_course_to_admins(client, admin_user):
    hidden = course_build(slug="draft-course", published=False)
    client.force_login(admin_user)
    assert client.get(reverse("frontend:course", args=[hidden.slug])).status_code == 200
    assert "draft-course" in client.get(reverse("frontend:catalog")).content.decode()


def test_it_renders_the_chapter_with_its_header_body_and_exercises_in_place(any_client, course):
    response = any_client.get(chapter_url(course, 2))
    assert response.status_code == 200
    page = response.content.decode()
    assert "<title>Attention by hand · Transformers from the ground up · EasyCompilers</title>" in page
    assert page.count("<h1") == 1
    for text in ("Part 2 of 10", "Advanced", "min read", "Back to course", "The lede of part 2."):
        assert text in page
    # Prose, then the first exercise, then more prose, then the second exercise.
    order = [
        page.index("Three vectors per token"),
        page.index("One query, three keys"),
        page.index("A weighted average, not a lookup"),
        page.index("A mask that hides the future"),
    ]
    assert order == sorted(order)
    exercise = course.chapters.get(number=2).exercises.get(position=1)
    assert f'data-exercise-id="{exercise.id}"' in page
    assert page.count('Click "Run" to execute your code') == 2
    assert "q = torch.tensor" in re.sub(r"<[^>]+>", "", page)


def test_it_links_previous_and_next_parts_skipping_coming_soon_ones(client, course):
    part_2 = client.get(chapter_url(course, 2)).content.decode()
    assert f'rel="next" href="{chapter_url(course, 4)}"' in part_2
    assert 'rel="prev"' not in part_2
    part_4 = client.get(chapter_url(course, 4)).content.decode()
    assert f'rel="prev" href="{chapter_url(course, 2)}"' in part_4
    assert 'rel="next"' not in part_4


def test_it_offers_the_vocabulary_panel_on_every_chapter(client, course):
    page = client.get(chapter_url(course, 4)).content.decode()
    assert '<dialog id="vocabulary-panel"' in page
    assert 'commandfor="vocabulary-panel"' in page
    for term in ("dot product", "soft alignment", "weighted sum"):
        assert f"<dt>{term}</dt>" in page


def test_it_lists_the_glossary_and_filters_it_without_script(client, course):
    url = reverse("frontend:glossary", args=[course.slug])
    page = client.get(url).content.decode()
    assert page.count('class="term-entry"') == 8
    assert not re.search(r'class="term-entry"[^>]*hidden', page)
    filtered = client.get(url, {"q": "SOFT"}).content.decode()
    assert re.search(r'data-term="softmax"\s*>', filtered)
    assert re.search(r'data-term="soft alignment"\s*>', filtered)
    assert re.search(r'data-term="query"\s+hidden>', filtered)
    assert "2 of 8 terms match" in filtered


@pytest.mark.parametrize("role", ["anonymous", "learner", "instructor"])
def test_it_hides_the_preview_from_non_staff(client, make_user, course, role):
    if role != "anonymous":
        client.force_login(make_user(role))
    chapter = course.chapters.get(number=1)
    assert client.get(reverse("frontend:chapter_preview", args=[chapter.id])).status_code == 404


def test_it_previews_any_chapter_for_staff_as_a_learner_sees_it(client, admin_user, course):
    client.force_login(admin_user)
    hidden = course_build(slug="draft-course", published=False)
    chapter = hidden.chapters.get(number=3)
    page = client.get(reverse("frontend:chapter_preview", args=[chapter.id])).content.decode()
    assert "Preview" in page and "once it is published" in page
    assert "Part 3 of 10" in page
    # Neighbours are those a learner could open, in preview too.
    assert reverse("frontend:chapter_preview", args=[hidden.chapters.get(number=2).id]) in page
    assert reverse("frontend:chapter_preview", args=[hidden.chapters.get(number=4).id]) in page
    published = client.get(reverse("frontend:chapter_preview", args=[course.chapters.get(number=2).id]))
    learner_page = client.get(chapter_url(course, 2))
    assert "One query, three keys" in published.content.decode()
    assert learner_page.status_code == 200
    assert client.get(reverse("frontend:chapter_preview", args=[999_999])).status_code == 404


def test_it_shows_login_and_signup_to_visitors_and_the_username_and_logout_to_members(client, learner, course):
    page = client.get(reverse("frontend:catalog")).content.decode()
    assert reverse("login") in page and reverse("signup") in page
    chapter_page = client.get(chapter_url(course, 2)).content.decode()
    assert f'href="{reverse("login")}?next={chapter_url(course, 2)}"' in chapter_page
    client.force_login(learner)
    page = client.get(reverse("frontend:catalog")).content.decode()
    assert learner.username in page
    assert re.search(rf'<form method="post" action="{reverse("logout")}">', page)


def test_it_marks_up_landmarks_and_a_skip_link(client, course):
    page = client.get(chapter_url(course, 2)).content.decode()
    for fragment in (
        '<header class="site-header">',
        '<nav class="site-nav" aria-label="Main">',
        '<main id="main"',
        "<footer",
        'href="#main"',
    ):
        assert fragment in page

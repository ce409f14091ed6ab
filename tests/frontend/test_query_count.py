"""A chapter page costs the same number of queries whatever the size of the glossary and the
number of exercises."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from courses.models import Exercise
from tests.frontend.conftest import course_build

QUERY_BUDGET = {"anonymous": 8, "learner": 14}


def _glossary(size: int) -> dict[str, str]:
    return {f"term {n:02d}": f"Definition number {n}." for n in range(size)}


def _chapter_page(client, *, glossary_size: int, extra_exercises: int, slug: str):
    course = course_build(slug=slug, glossary=_glossary(glossary_size))
    chapter = course.chapters.get(number=2)
    references = " ".join(f"[[term {n:02d}]]" for n in range(glossary_size))
    chapter.body += f"\n\nEvery term: {references}\n"
    for n in range(extra_exercises):
        Exercise.objects.create(chapter=chapter, slug=f"extra-{n}", position=10 + n, title=f"Extra {n}")
        chapter.body += f"\n[[exercise:extra-{n}]]\n"
    chapter.save()
    return reverse("frontend:chapter", args=[course.slug, chapter.slug])


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["anonymous", "learner"])
def test_it_costs_a_fixed_number_of_queries_whatever_the_glossary_size(
    client, make_user, django_assert_num_queries, role
):
    small = _chapter_page(client, glossary_size=3, extra_exercises=0, slug="small")
    large = _chapter_page(client, glossary_size=60, extra_exercises=6, slug="large")
    if role != "anonymous":
        client.force_login(make_user(role))
    # Warm both pages so the two measured requests start from the same state (session, and any
    # first-visit bookkeeping a page does for a learner).
    client.get(small)
    client.get(large)

    with CaptureQueriesContext(connection) as small_queries:
        assert client.get(small).status_code == 200
    # The pin: the large page costs exactly what the small one does...
    with django_assert_num_queries(len(small_queries)):
        response = client.get(large)
    # ...and the page stays within a small budget (course, chapter, outline, exercises, glossary,
    # plus the session, the user and the learner's own state when logged in).
    assert len(small_queries) <= QUERY_BUDGET[role], [q["sql"][:120] for q in small_queries]
    assert response.status_code == 200
    assert response.content.decode().count('class="term-entry"') == 60
    assert response.content.decode().count('<section class="exercise') == 8

"""The course completion page: what a learner built, their quiz score and exercise passes per part,
a clear state for every part, links to it, and a learner's record seen by that learner only."""

import re

import pytest
from django.urls import reverse

from courses.completion import module_pieces
from courses.models import Chapter, Course
from courses.services.progress import chapter_progress_refresh, exercise_record_pass
from tests.learning.completion_support import (
    MODULE,
    course_with_module,
    exercise,
    quiz_take,
    record_build,
    run_add,
)

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    """The page's words, tags dropped and spaces squeezed, as a reader sees them."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace(" ,", ",")


def _part(html: str, number: int) -> str:
    """The words of one part's entry on the completion page."""
    match = re.search(
        rf'<li class="part record-part[^"]*" aria-labelledby="record-part-{number}">(.*?)</li>\s*(?=<li class="part|</ol>)',
        html,
        re.S,
    )
    assert match, f"part {number} not on the page"
    return _text(match.group(1))


def _page(client, course) -> str:
    response = client.get(reverse("frontend:course_complete", args=[course.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_each_part_scores_passes_and_the_pieces_it_builds(client, learner):
    course = course_with_module()
    record_build(user=learner, course=course, marker="learner one was here")
    client.force_login(learner)

    html = _page(client, course)

    assert "What you have built so far" in html
    assert "0 of 2 parts complete" in _text(html)
    part_2 = _part(html, 2)
    assert "In progress" in part_2
    assert "Quiz 4 of 5 right at the first try" in part_2
    assert "Exercises 2 of 2 passed" not in part_2
    assert "Exercises 1 of 2 passed" in part_2
    assert "Passed One query, three keys" in part_2
    assert "Not passed yet A mask that hides the future" in part_2
    assert "builds: groundup.causal_mask, groundup.Scores" in part_2
    assert "groundup.double" not in part_2

    part_4 = _part(html, 4)
    assert "Not started" in part_4
    assert "Quiz Not taken yet (5 questions)" in part_4
    assert "Exercises 0 of 1 passed" in part_4
    assert "Not run yet A feed-forward pass (the downloads hold its starter code)" in part_4
    assert "groundup.WIDTH, groundup.double" in part_4

    # Parts that cannot be opened yet say so, and show nothing of theirs.
    for number in (1, 3, 5, 10):
        assert "Coming soon" in _part(html, number)
        assert "Quiz" not in _part(html, number)
    link = reverse("frontend:chapter", args=[course.slug, "attention-by-hand"]) + "#exercise-one-query-three-keys"
    assert f'href="{link}"' in html
    assert reverse("frontend:code_notebook", args=[course.slug]) in html
    assert reverse("frontend:code_package", args=[course.slug]) in html


def test_it_says_a_part_is_complete_and_what_the_learner_built_in_it(client, learner):
    course = course_with_module()
    record_build(user=learner, course=course, marker="done")
    exercise_record_pass(user=learner, exercise=exercise(course, "a-mask-that-hides-the-future"))
    client.force_login(learner)

    part_2 = _part(_page(client, course), 2)

    assert "Complete" in part_2
    assert "Exercises 2 of 2 passed" in part_2
    assert "You built: groundup.causal_mask, groundup.Scores" in part_2


def test_it_says_the_course_is_finished_when_every_part_is_complete(client, learner):
    course = course_with_module()
    Chapter.objects.filter(course=course).update(published=True)
    client.force_login(learner)
    assert "You finished the course" not in _page(client, course)

    for chapter in course.chapters.all():
        if chapter.questions.exists():
            quiz_take(user=learner, course=course, number=chapter.number)
        for item in chapter.exercises.all():
            run_add(user=learner, exercise=item, code=item.starter_code, passed=True)
        if not chapter.questions.exists() and not chapter.exercises.exists():
            chapter_progress_refresh(user=learner, chapter=chapter)

    html = _page(client, course)
    assert "You finished the course" in html
    assert "10 of 10 parts complete" in _text(html)
    assert "Coming soon" not in html


def test_the_outline_links_to_it_and_the_last_part_does_once_finished(client, learner):
    course = course_with_module()
    client.force_login(learner)
    complete_url = reverse("frontend:course_complete", args=[course.slug])

    outline = client.get(reverse("frontend:course", args=[course.slug])).content.decode()
    assert f'href="{complete_url}"' in outline

    # Part 4 is the last part open to learners: its page links to the record once it is finished.
    last = reverse("frontend:chapter", args=[course.slug, "the-feed-forward-block"])
    assert complete_url not in client.get(last).content.decode()
    quiz_take(user=learner, course=course, number=4)
    assert complete_url not in client.get(last).content.decode()
    run_add(user=learner, exercise=exercise(course, "a-feed-forward-pass"), code="print(1)\n", passed=True)
    page = client.get(last).content.decode()
    assert f'href="{complete_url}"' in page
    assert "You finished every part open so far" in page

    # Part 2 is not the last part: no link there.
    part_2 = reverse("frontend:chapter", args=[course.slug, "attention-by-hand"])
    quiz_take(user=learner, course=course, number=2)
    for slug in ("one-query-three-keys", "a-mask-that-hides-the-future"):
        run_add(user=learner, exercise=exercise(course, slug), code="print(1)\n", passed=True)
    assert complete_url not in client.get(part_2).content.decode()


def test_a_visitor_is_asked_to_log_in(client):
    course = course_with_module()
    for name in ("course_complete", "code_notebook", "code_package"):
        response = client.get(reverse(f"frontend:{name}", args=[course.slug]))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_a_course_the_learner_cannot_see_is_not_found(client, learner):
    hidden = course_with_module(slug="hidden")
    Course.objects.filter(pk=hidden.pk).update(published=False)
    client.force_login(learner)
    for name in ("course_complete", "code_notebook", "code_package"):
        assert client.get(reverse(f"frontend:{name}", args=["hidden"])).status_code == 404
        assert client.get(reverse(f"frontend:{name}", args=["no-such-course"])).status_code == 404


def test_a_learner_sees_only_their_own_record(client, make_user):
    course = course_with_module()
    one, other = make_user(), make_user()
    record_build(user=one, course=course, marker="only learner one wrote this")
    client.force_login(other)

    html = _page(client, course)
    part_2 = _part(html, 2)
    assert "Not started" in part_2
    assert "Quiz Not taken yet" in part_2
    assert "Exercises 0 of 2 passed" in part_2
    notebook = client.get(reverse("frontend:code_notebook", args=[course.slug])).content.decode()
    package = client.get(reverse("frontend:code_package", args=[course.slug])).content
    assert "only learner one wrote this" not in notebook
    assert b"only learner one wrote" not in package
    assert "Starter code: you never ran this exercise" in notebook
    # A learner's id in the address changes nothing: the record is always the session's.
    assert (
        "only learner one"
        not in client.get(
            reverse("frontend:code_notebook", args=[course.slug]) + f"?user={one.pk}&learner={one.pk}"
        ).content.decode()
    )


def test_a_draft_chapter_slug_cannot_take_the_completion_page_address():
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="taken by a course page"):
        Chapter(slug="complete").clean()


def test_it_pins_the_page_queries_whatever_the_number_of_parts(client, learner, django_assert_num_queries):
    small = course_with_module(slug="small")
    record_build(user=learner, course=small, marker="small")
    client.force_login(learner)
    url = reverse("frontend:course_complete", args=[small.slug])
    # session, user; the course; whether they teach it; the outline; complete parts; exercises with
    # first pass and last run; questions per part; answers per part; the course modules; the
    # learner's own pieces of them.
    with django_assert_num_queries(11):
        assert "1 of 2 passed" in _text(client.get(url).content.decode())

    large = course_with_module(slug="large")
    Chapter.objects.filter(course=large).update(published=True)
    record_build(user=learner, course=large, marker="large")
    quiz_take(user=learner, course=large, number=4)
    url = reverse("frontend:course_complete", args=[large.slug])
    with django_assert_num_queries(11):
        html = client.get(url).content.decode()
    assert _text(html).count("Not taken yet") == 0
    assert "Quiz No quiz" in _part(html, 7)


def test_it_reads_the_pieces_each_part_adds_from_the_module_header_comments():
    pieces = module_pieces(name="groundup", source=MODULE)
    assert [(part, piece.name, piece.kind) for part, piece in pieces] == [
        (2, "causal_mask", "function"),
        (2, "Scores", "class"),
        (4, "WIDTH", "value"),
        (4, "double", "function"),
    ]
    source = "import re\n\nTOKEN = 1\n_private = 2\n\n# Part 3: positions\n\n@staticmethod\ndef rotate():\n    pass\n"
    assert [(part, piece.name) for part, piece in module_pieces(name="m", source=source)] == [
        (None, "TOKEN"),
        (3, "rotate"),
    ]
    assert module_pieces(name="broken", source="def (:\n") == []

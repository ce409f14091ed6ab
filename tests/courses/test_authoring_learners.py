"""An exercise's admin page shows what learners do with it: the instructor dashboard's pass rate,
median runs to pass and commonest errors (the hand-worked course of tests/teaching)."""

import pytest
from django.urls import reverse

from tests.teaching.conftest import hand_course_build

pytestmark = pytest.mark.django_db


def test_the_exercise_page_shows_its_learners_figures(client, make_user, settings):
    hand = hand_course_build(make_user=make_user, settings=settings)
    settings.RUNNER_BACKEND = "local"
    client.force_login(hand.admin)
    e1, e2 = hand.e1, hand.e2

    page = client.get(reverse("admin:courses_exercise_change", args=[e1.pk])).content.decode()
    idle = client.get(reverse("admin:courses_exercise_change", args=[e2.pk])).content.decode()

    assert "Pass rate: <strong>67%</strong> (2 of 3 learners who ran it)" in page
    assert "Median runs to pass: <strong>3.0</strong>" in page
    assert "Commonest errors: NameError (4), ValueError (1)" in page
    assert f'href="{reverse("frontend:teach_course", kwargs={"course_slug": "hand"})}"' in page
    assert "No learner has run this exercise yet." in idle


def test_the_chapter_page_links_each_exercise_to_its_own_page(client, make_user, settings):
    hand = hand_course_build(make_user=make_user, settings=settings)
    client.force_login(hand.admin)
    e1 = hand.e1

    page = client.get(reverse("admin:courses_chapter_change", args=[hand.part1.pk])).content.decode()

    assert reverse("admin:courses_exercise_change", args=[e1.pk]) in page

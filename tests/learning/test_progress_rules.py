"""Enrolment on first visit, the learner's place, chapter completion and where Continue leads."""

import pytest
from django.urls import reverse

from courses.models import ChapterProgress, Enrolment
from courses.selectors import course_outline_for_user
from courses.selectors_progress import course_progress_for_learner
from courses.services.progress import chapter_progress_refresh, exercise_code_save, exercise_record_pass
from courses.services.quizzes import quiz_answer
from tests.learning.conftest import chapter_url, questions_of, right

pytestmark = pytest.mark.django_db


def _finish_quiz(user, course, number):
    for question in questions_of(course, number):
        quiz_answer(user=user, question=question, choice=right(question))


def _place_url(course, number):
    return reverse("frontend:place_save", args=[course.slug, course.chapters.get(number=number).slug])


def test_it_enrols_a_learner_on_the_first_visit_to_the_course_or_a_chapter(client, make_user, course):
    first, second = make_user(), make_user()
    client.force_login(first)
    client.get(reverse("frontend:course", args=[course.slug]))
    assert Enrolment.objects.filter(user=first, course=course, last_chapter=None).exists()
    client.force_login(second)
    client.get(chapter_url(course, 2))
    enrolment = Enrolment.objects.get(user=second, course=course)
    assert enrolment.last_chapter.number == 2 and enrolment.last_place == ""
    client.get(chapter_url(course, 2))
    assert Enrolment.objects.filter(user=second).count() == 1


def test_it_never_enrols_visitors_or_shows_them_progress(client, course):
    client.get(reverse("frontend:course", args=[course.slug]))
    client.get(chapter_url(course, 2))
    assert client.post(_place_url(course, 2), {"place": "quiz"}).status_code == 204
    assert not Enrolment.objects.exists()
    for url in (reverse("frontend:catalog"), reverse("frontend:course", args=[course.slug])):
        page = client.get(url).content.decode()
        assert "course-progress" not in page and "Continue" not in page


def test_it_remembers_the_place_the_page_reports_and_keeps_it_when_the_learner_returns(client, learner, course):
    client.force_login(learner)
    client.get(chapter_url(course, 2))
    assert client.post(_place_url(course, 2), {"place": "exercise-one-query-three-keys"}).status_code == 204
    assert Enrolment.objects.get(user=learner).last_place == "exercise-one-query-three-keys"
    assert client.post(_place_url(course, 2), {"place": "quiz"}).status_code == 204
    client.get(chapter_url(course, 2))  # coming back to /part-2/#quiz keeps "quiz"
    assert Enrolment.objects.get(user=learner).last_place == "quiz"
    client.get(chapter_url(course, 4))  # another part starts at its top
    enrolment = Enrolment.objects.get(user=learner)
    assert (enrolment.last_chapter.number, enrolment.last_place) == (4, "")


def test_it_refuses_places_that_are_not_on_the_page(client, learner, course):
    client.force_login(learner)
    client.get(chapter_url(course, 2))
    for place in ("exercise-a-feed-forward-pass", "somewhere", "quiz#x", ""):
        assert client.post(_place_url(course, 2), {"place": place}).status_code == 400, place
    assert Enrolment.objects.get(user=learner).last_place == ""
    hidden = reverse("frontend:place_save", args=[course.slug, course.chapters.get(number=3).slug])
    assert client.post(hidden, {"place": "quiz"}).status_code == 404


def test_it_completes_a_chapter_only_with_the_quiz_finished_and_every_exercise_passed(learner, course, part_2):
    exercises = list(part_2.exercises.order_by("position"))
    exercise_record_pass(user=learner, exercise=exercises[0])
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).completed_at is None
    _finish_quiz(learner, course, 2)
    progress = ChapterProgress.objects.get(user=learner, chapter=part_2)
    assert progress.quiz_finished_at is not None and progress.completed_at is None
    exercise_record_pass(user=learner, exercise=exercises[1])
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).completed_at is not None


def test_it_completes_a_chapter_when_the_last_exercise_passes_before_the_quiz_ends(learner, course, part_2):
    for exercise in part_2.exercises.all():
        exercise_record_pass(user=learner, exercise=exercise)
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).completed_at is None
    _finish_quiz(learner, course, 2)
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).completed_at is not None


def test_it_does_not_count_another_learners_pass_or_saved_code_as_a_pass(make_user, course, part_2):
    learner, other = make_user(), make_user()
    for exercise in part_2.exercises.all():
        exercise_record_pass(user=other, exercise=exercise)
        exercise_code_save(user=learner, exercise=exercise, code="print(1)")
    _finish_quiz(learner, course, 2)
    assert chapter_progress_refresh(user=learner, chapter=part_2).completed_at is None


def test_it_counts_complete_published_parts_and_marks_each_part(learner, course, part_2):
    part_4 = course.chapters.get(number=4)
    _finish_quiz(learner, course, 4)
    for exercise in part_4.exercises.all():
        exercise_record_pass(user=learner, exercise=exercise)
    exercise_record_pass(user=learner, exercise=part_2.exercises.first())
    parts = course_outline_for_user(course=course, user=learner)
    progress = course_progress_for_learner(user=learner, course=course, parts=parts)
    assert (progress.complete_count, progress.published_count, progress.percent) == (1, 2, 50)
    assert progress.parts[part_4.pk].complete and progress.parts[part_4.pk].quiz_finished
    marks = progress.parts[part_2.pk]
    assert not marks.complete and (marks.exercises_passed, marks.exercise_count) == (1, 2)


def test_it_shows_progress_and_continue_to_the_part_and_place_left_on_catalog_and_course_page(client, learner, course):
    client.force_login(learner)
    _finish_quiz(learner, course, 4)
    for exercise in course.chapters.get(number=4).exercises.all():
        exercise_record_pass(user=learner, exercise=exercise)
    client.get(chapter_url(course, 2))
    client.post(_place_url(course, 2), {"place": "quiz"})
    target = chapter_url(course, 2) + "#quiz"
    for url in (reverse("frontend:catalog"), reverse("frontend:course", args=[course.slug])):
        page = client.get(url).content.decode()
        assert "1 of 2 parts complete" in page
        assert '<progress class="progress-bar" max="2" value="1"' in page
        assert f'href="{target}"' in page and "Continue" in page
    outline = client.get(reverse("frontend:course", args=[course.slug])).content.decode()
    assert "Complete</span>" in outline


def test_it_offers_no_continue_into_a_part_that_was_unpublished_since(client, learner, course, part_2):
    client.force_login(learner)
    client.get(chapter_url(course, 2))
    part_2.published = False
    part_2.save()
    page = client.get(reverse("frontend:course", args=[course.slug])).content.decode()
    assert "course-progress" in page and "continue-link" not in page

"""Validation on save: an exercise's starter and solution run with its check in the real local
sandbox (bubblewrap), in a real Celery worker where Redis is set (in this process where it is
not), when the chapter is saved or Validate is pressed; the verdicts show on the page, and a
chapter whose exercise fails cannot be published (a draft can be saved)."""

import pytest
from django.urls import reverse

from courses.models import Chapter, Exercise, ExerciseValidation
from courses.services.authoring import chapter_publish_problems, exercise_validate
from courses.services.content_io import course_import
from tests.courses.test_admin import _form_data

pytestmark = pytest.mark.django_db

STARTER = "import torch\n\nt = torch.tensor([1.0])\nprint(t)\n"
SOLUTION = "import torch\n\nt = torch.tensor([1.0, 2.0, 3.0])\n"
BROKEN_CHECK = (
    "def check(ns):\n"
    "    t = ns.get('t')\n"
    "    return len(t) == 4, 't holds three numbers.' if len(t) == 4 else 't should hold four numbers.'\n"
)
RAISING_CHECK = "def check(ns):\n    return ns['missing'] > 0, 'never'\n"


@pytest.fixture
def exercise(course_dir, local_backend) -> Exercise:
    course = course_import(path=course_dir).course
    exercise = Exercise.objects.get(chapter__course=course, slug="make-a-tensor")
    exercise.starter_code, exercise.solution_code = STARTER, SOLUTION
    exercise.save()
    return exercise


def _change_page(client, chapter: Chapter):
    return client.get(reverse("admin:courses_chapter_change", args=[chapter.pk]))


def _save(client, chapter: Chapter, **changes):
    data = _form_data(_change_page(client, chapter))
    if changes.pop("published", True) is False:
        data.pop("published", None)
    data.update(changes)
    data["_continue"] = "Save and continue editing"  # back to the same page, verdicts and all
    return client.post(reverse("admin:courses_chapter_change", args=[chapter.pk]), data, follow=True)


def _exercise_field(name: str) -> str:
    return f"exercises-0-{name}"


def test_it_passes_a_solution_that_passes_and_a_starter_that_does_not(exercise):
    validation = exercise_validate(exercise=exercise)

    assert validation.ok, validation.problems
    runs = {run["role"]: run for run in validation.runs}
    assert runs["solution"]["passed"] and not runs["starter"]["passed"]
    assert runs["starter"]["check"] == "t should hold three numbers."
    assert "tensor([1.])" in runs["starter"]["output"]
    assert validation.took_ms > 0 and validation.backend == "local"


def test_a_named_backend_runs_the_sandbox_in_this_process(exercise):
    validation = exercise_validate(exercise=exercise, backend="local")

    assert validation.ok and validation.backend == "local"


def test_it_shows_the_verdicts_on_the_chapter_page_after_a_save(client, admin_user, exercise):
    client.force_login(admin_user)
    chapter = exercise.chapter

    page = _save(client, chapter).content.decode()

    assert "Validation passed" in page
    assert "Starter: succeeded" in page and "t should hold three numbers." in page
    assert "Solution: succeeded" in page


def test_it_saves_a_broken_check_in_a_draft_and_says_why_it_fails(client, admin_user, exercise):
    client.force_login(admin_user)
    chapter = exercise.chapter
    Chapter.objects.filter(pk=chapter.pk).update(published=False)

    page = _save(client, chapter, published=False, **{_exercise_field("check_code"): BROKEN_CHECK}).content.decode()

    exercise.refresh_from_db()
    assert "len(t) == 4" in exercise.check_code
    assert "Validation failed" in page
    assert "the solution does not pass its check (succeeded: t should hold four numbers.)" in page
    assert "make-a-tensor" in chapter_publish_problems(chapter=chapter)[0]


def test_it_refuses_to_publish_a_chapter_whose_exercise_fails(client, admin_user, exercise):
    client.force_login(admin_user)
    chapter = exercise.chapter
    assert chapter.published

    page = _save(client, chapter, **{_exercise_field("check_code"): BROKEN_CHECK}).content.decode()

    exercise.refresh_from_db()
    assert "len(t) == 3" in exercise.check_code  # nothing saved
    assert "The chapter cannot be published: Exercise &#x27;make-a-tensor&#x27; fails validation" in page
    assert "t should hold four numbers." in page


def test_the_publish_action_names_the_exercise_that_fails(client, admin_user, exercise):
    client.force_login(admin_user)
    chapter = exercise.chapter
    Chapter.objects.filter(pk=chapter.pk).update(published=False)
    Exercise.objects.filter(pk=exercise.pk).update(check_code=RAISING_CHECK)

    page = client.post(
        reverse("admin:courses_chapter_changelist"),
        {"action": "publish", "_selected_action": [chapter.pk]},
        follow=True,
    ).content.decode()

    assert not Chapter.objects.get(pk=chapter.pk).published
    assert "was not published: Exercise &#x27;make-a-tensor&#x27; fails validation" in page
    assert "the check raised an exception on the solution code" in page


def test_validate_reruns_and_a_fixed_exercise_publishes(client, admin_user, exercise):
    client.force_login(admin_user)
    chapter = exercise.chapter
    Chapter.objects.filter(pk=chapter.pk).update(published=False)
    Exercise.objects.filter(pk=exercise.pk).update(check_code=BROKEN_CHECK)
    assert chapter_publish_problems(chapter=chapter)

    Exercise.objects.filter(pk=exercise.pk).update(
        check_code=Exercise.objects.get(pk=exercise.pk).check_code.replace("4", "3")
    )
    page = client.post(reverse("admin:courses_chapter_validate", args=[chapter.pk]), follow=True).content.decode()

    assert "Exercise &#x27;make-a-tensor&#x27; passes validation" in page
    assert ExerciseValidation.objects.get(exercise=exercise).ok
    assert chapter_publish_problems(chapter=chapter) == []

"""Authoring in the Django admin: who gets in, the publish actions, the quiz rules, reading time."""

import pytest
from django.urls import reverse

from courses.admin import chapter_preview_url
from courses.models import Chapter, Choice, Course, Exercise, GlossaryTerm, Question
from courses.services.content_io import course_import
from tests.courses.conftest import admin_form_data as _form_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def course(course_dir):
    return course_import(path=course_dir).course


def _admin_urls(course) -> list[str]:
    chapter = course.chapters.get(slug="attention")
    objects = {
        "course": course,
        "chapter": chapter,
        "question": chapter.questions.first(),
        "glossaryterm": course.glossary.first(),
    }
    urls = []
    for name, obj in objects.items():
        urls += [
            reverse(f"admin:courses_{name}_changelist"),
            reverse(f"admin:courses_{name}_add"),
            reverse(f"admin:courses_{name}_change", args=[obj.pk]),
        ]
    return urls


def test_it_keeps_learners_and_instructors_out_of_the_admin(client, course, learner, instructor):
    course.instructors.add(instructor)
    for user in (learner, instructor):
        client.force_login(user)
        for url in _admin_urls(course):
            response = client.get(url)
            assert response.status_code == 302, url
            assert response.url.startswith(reverse("admin:login")), url


def test_it_lets_an_admin_open_every_page(client, course, admin_user):
    client.force_login(admin_user)
    for url in [reverse("admin:index"), *_admin_urls(course)]:
        assert client.get(url).status_code == 200, url


def test_it_links_each_chapter_to_its_preview(client, course, admin_user):
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")

    listing = client.get(reverse("admin:courses_chapter_changelist")).content.decode()
    page = client.get(reverse("admin:courses_chapter_change", args=[chapter.pk])).content.decode()

    link = f'href="{chapter_preview_url(chapter.pk)}"'
    assert link in listing
    assert link in page
    assert str(chapter.pk) in chapter_preview_url(chapter.pk)


def test_it_publishes_and_unpublishes_chapters_and_courses(client, course, admin_user):
    client.force_login(admin_user)
    soon = course.chapters.get(slug="coming-soon")
    url = reverse("admin:courses_chapter_changelist")

    client.post(url, {"action": "publish", "_selected_action": [soon.pk]})
    soon.refresh_from_db()
    assert soon.published
    client.post(url, {"action": "unpublish", "_selected_action": [soon.pk]})
    soon.refresh_from_db()
    assert not soon.published

    client.post(reverse("admin:courses_course_changelist"), {"action": "unpublish", "_selected_action": [course.pk]})
    course.refresh_from_db()
    assert not course.published
    assert course.chapters.filter(published=True).count() == 2  # chapters keep their own flag


@pytest.mark.parametrize(
    ("marked", "said"),
    [
        ([], "This question has no correct choice."),
        ([0, 1], "This question has 2 correct choices; it needs exactly one."),
    ],
)
def test_it_requires_exactly_one_correct_choice(client, course, admin_user, marked, said):
    client.force_login(admin_user)
    question = Question.objects.get(chapter__slug="attention", position=1)
    url = reverse("admin:courses_question_change", args=[question.pk])
    data = _form_data(client.get(url))
    for index in range(2):
        data.pop(f"choices-{index}-is_correct", None)
        if index in marked:
            data[f"choices-{index}-is_correct"] = "on"
        data[f"choices-{index}-explanation"] = "Because."

    response = client.post(url, data)

    assert response.status_code == 200
    assert said in response.content.decode()
    assert list(question.choices.values_list("is_correct", flat=True)) == [True, False]


def test_it_moves_the_correct_choice_and_reorders_choices(client, course, admin_user):
    client.force_login(admin_user)
    question = Question.objects.get(chapter__slug="attention", position=1)
    first, second = question.choices.all()
    url = reverse("admin:courses_question_change", args=[question.pk])
    data = _form_data(client.get(url))
    # The second choice becomes the right one and the first; both writes would clash if saved naively.
    del data["choices-0-is_correct"]
    data["choices-1-is_correct"] = "on"
    data["choices-0-explanation"] = "Now wrong."
    data["choices-0-position"], data["choices-1-position"] = 2, 1

    response = client.post(url, data)

    assert response.status_code == 302, response.context and response.context["errors"]
    assert list(question.choices.values_list("pk", "is_correct")) == [(second.pk, True), (first.pk, False)]


def test_it_refreshes_reading_time_after_saving_a_chapter(client, course, admin_user, local_backend):
    # An exercise changed in a published chapter is validated in the sandbox before it is saved.
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")
    assert chapter.reading_minutes == 1
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    data = _form_data(client.get(url))
    data["exercises-0-starter_code"] = "# a long comment about tensors\n" * 120

    response = client.post(url, data)

    assert response.status_code == 302, response.context and response.context["errors"]
    chapter.refresh_from_db()
    assert chapter.reading_minutes == 4
    assert Exercise.objects.get(slug="score-keys").starter_code.startswith("# a long comment")


def test_it_adds_an_exercise_in_the_order_the_body_places_it(client, course, admin_user, local_backend):
    # A new exercise in a published chapter is validated in the sandbox before it is saved.
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    data = _form_data(client.get(url))
    data["body"] = "[[exercise:first-look]]\n\n" + data["body"]
    data["exercises-TOTAL_FORMS"] = 3
    data.update(
        {
            "exercises-2-slug": "first-look",
            "exercises-2-title": "First look",
            "exercises-2-time_limit_s": 20,
            "exercises-2-chapter": chapter.pk,
        }
    )

    response = client.post(url, data)

    assert response.status_code == 302, response.context and response.context["errors"]
    assert list(chapter.exercises.values_list("slug", "position")) == [
        ("first-look", 1),
        ("score-keys", 2),
        ("on-the-gpu", 3),
    ]


def test_it_refuses_an_exercise_the_body_does_not_place(client, course, admin_user):
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    data = _form_data(client.get(url))
    data["body"] = data["body"].replace("[[exercise:on-the-gpu]]", "")

    response = client.post(url, data)

    assert response.status_code == 200
    assert "Exercise &#x27;on-the-gpu&#x27; is not placed in the body" in response.content.decode()
    assert "[[exercise:on-the-gpu]]" in Chapter.objects.get(pk=chapter.pk).body


def test_it_searches_and_filters_the_glossary(client, course, admin_user):
    client.force_login(admin_user)
    other = Course.objects.create(slug="other", title="Other")
    GlossaryTerm.objects.create(course=other, term="softmax", definition="elsewhere")
    url = reverse("admin:courses_glossaryterm_changelist")

    found = client.get(url, {"q": "softmax", "course__id__exact": course.pk}).context["cl"].queryset

    assert [(term.course_id, term.term) for term in found] == [(course.pk, "softmax")]
    assert Choice.objects.count() == 5


def test_it_adds_quiz_questions_only_with_their_choices(client, course, admin_user):
    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")

    page = client.get(reverse("admin:courses_chapter_change", args=[chapter.pk]))
    questions = next(x for x in page.context["inline_admin_formsets"] if x.formset.model is Question)
    add_url = f"{reverse('admin:courses_question_add')}?chapter={chapter.pk}"
    assert not questions.has_add_permission, "a question added on the chapter page would have no choices"
    assert f'href="{add_url}"' in page.content.decode()

    form = client.get(add_url)
    assert form.context["adminform"].form["chapter"].value() == str(chapter.pk)
    assert len(next(iter(form.context["inline_admin_formsets"])).formset.forms) == 2
    data = {
        "chapter": chapter.pk,
        "position": 9,
        "kind": "single-choice",
        "prompt": "Which choice has no choices?",
        "choices-TOTAL_FORMS": 0,
        "choices-INITIAL_FORMS": 0,
    }
    refused = client.post(reverse("admin:courses_question_add"), data)
    assert refused.status_code == 200
    assert "This question has 0 choices; a question has 2 to 6." in refused.content.decode()
    assert not chapter.questions.filter(position=9).exists()


def test_it_edits_an_exercises_hints_and_refuses_one_that_quotes_the_solution(
    client, course, admin_user, local_backend
):
    client.force_login(admin_user)
    exercise = Exercise.objects.get(slug="make-a-tensor")
    url = reverse("admin:courses_exercise_change", args=[exercise.pk])
    data = _form_data(client.get(url))
    assert data["hints-TOTAL_FORMS"] == 2
    data["hints-1-text"] = "Write it out: t = torch.tensor([1.0, 2.0, 3.0])"

    refused = client.post(url, data)

    assert refused.status_code == 200
    assert "Hint 2: the hint gives away a line of the solution: &#x27;t = torch.tensor([1.0, 2.0, 3.0])&#x27;." in (
        refused.content.decode()
    )
    assert exercise.hints.get(position=2).text.startswith("`torch.tensor` takes a whole list")

    data["hints-1-text"] = "Three values, each a float: the list decides the length."
    saved = client.post(url, data)

    assert saved.status_code == 302
    assert list(exercise.hints.values_list("text", flat=True)) == [
        "`t` holds one number now: count the values in the list.",
        "Three values, each a float: the list decides the length.",
    ]

"""One set of authoring rules (courses/rules.py): the importer and the admin give the same verdict
on the same bad chapter body or quiz question, and a new question type is one class and its
template, taken by the importer, the exporter, the admin, the quiz service and the chapter page."""

import re
from html import escape
from pathlib import Path

import pytest
from django.urls import reverse

from courses.models import Chapter, Course, Question
from courses.rules import Problem, QuestionType, question_type_register, question_type_unregister
from courses.services.content_io import ContentError, course_export, course_import, course_read
from courses.services.quizzes import quiz_answer
from tests.courses.conftest import admin_form_data, edit

pytestmark = pytest.mark.django_db

C2 = "chapters/02-attention/chapter.md"
Q = "chapters/02-attention/quiz.yaml"


@pytest.fixture
def course(course_dir) -> Course:
    return course_import(path=course_dir).course


def _importer_says(course_dir: Path) -> ContentError:
    with pytest.raises(ContentError) as refused:
        course_read(path=course_dir)
    return refused.value


# --- The same verdicts ------------------------------------------------------------------------

MARKER = "[[exercise:on-the-gpu]]"
BAD_BODIES = [
    # Each breaks one rule. Before the rules were shared, the admin took a marker inside a listing
    # as placed and said nothing of a marker in a sentence, an indented one or a misspelt slug.
    pytest.param(f"```\n{MARKER}\n```", "exercise 'on-the-gpu' is not placed in the body", id="in-a-listing"),
    pytest.param(f"  {MARKER}", "[[exercise:on-the-gpu]] must start its line, not be indented", id="indented"),
    pytest.param(f"Try {MARKER} now.", "[[exercise:on-the-gpu]] must stand on a line of its own", id="in-a-sentence"),
    pytest.param(f"{MARKER}\n\n[[exercise:On-The-GPU]]", "[[exercise:On-The-GPU]] names no exercise", id="misspelt"),
    pytest.param(f"{MARKER}\n\n{MARKER}", "exercise 'on-the-gpu' is placed more than once", id="twice"),
]


@pytest.mark.parametrize(("marker_lines", "verdict"), BAD_BODIES)
def test_the_importer_and_the_admin_refuse_the_same_body_in_the_same_words(
    client, course, course_dir, admin_user, marker_lines, verdict
):
    edit(course_dir / C2, MARKER, marker_lines)
    refused = _importer_says(course_dir)
    assert refused.file == C2 and refused.problem.startswith(verdict)

    client.force_login(admin_user)
    chapter = course.chapters.get(slug="attention")
    url = reverse("admin:courses_chapter_change", args=[chapter.pk])
    data = admin_form_data(client.get(url))
    data["body"] = data["body"].replace(MARKER, marker_lines)
    response = client.post(url, data)

    assert response.status_code == 200, "the admin saved a body the importer refuses"
    # The admin counts lines in the body, not in the file; it may start the sentence with a capital.
    assert escape(refused.problem + ".").lower() in response.content.decode().lower()
    assert Chapter.objects.get(pk=chapter.pk).body == chapter.body


BAD_QUESTIONS = [
    pytest.param(
        lambda d: edit(d / Q, "      correct: true\n      explanation: The query", "      explanation: The query"),
        lambda data: data.pop("choices-0-is_correct"),
        id="no-correct-choice",
    ),
    pytest.param(
        lambda d: edit(
            d / Q, "offers\n      explanation: That", "offers\n      correct: true\n      explanation: That"
        ),
        lambda data: data.update({"choices-1-is_correct": "on"}),
        id="two-correct-choices",
    ),
    pytest.param(
        lambda d: edit(d / Q, "      explanation: That is the key.\n", ""),
        lambda data: data.update({"choices-1-explanation": "  "}),
        id="wrong-choice-unexplained",
    ),
    pytest.param(
        lambda d: edit(d / Q, "    - text: What this position offers\n      explanation: That is the key.\n", ""),
        lambda data: data.update({"choices-1-DELETE": "on"}),
        id="too-few-choices",
    ),
]


@pytest.mark.parametrize(("break_file", "break_form"), BAD_QUESTIONS)
def test_the_importer_and_the_admin_refuse_the_same_question_for_the_same_reason(
    client, course, course_dir, admin_user, break_file, break_form
):
    break_file(course_dir)
    refused = _importer_says(course_dir)
    assert refused.file == Q and refused.problem.startswith("question 1")
    reason = re.sub(r"^question 1(, choice (\d))? ", "", refused.problem)

    client.force_login(admin_user)
    question = Question.objects.get(chapter__slug="attention", position=1)
    url = reverse("admin:courses_question_change", args=[question.pk])
    data = admin_form_data(client.get(url))
    break_form(data)
    response = client.post(url, data)

    assert response.status_code == 200, "the admin saved a question the importer refuses"
    page = response.content.decode()
    choice = re.match(r"^question 1, choice (\d)", refused.problem)
    subject = f"Choice {choice.group(1)} (&#x27;What this position offers&#x27;)" if choice else "This question"
    assert f"{subject} {escape(reason)}." in page
    assert [(c.text, c.is_correct, c.explanation != "") for c in question.choices.all()] == [
        ("What this position is looking for", True, True),
        ("What this position offers", False, True),
    ]


# --- A question type added in one class ---------------------------------------------------------


class Opinion(QuestionType):
    """A test-only type: the learner gives their view, so every answer counts and none is marked."""

    kind = "opinion"
    label = "Opinion: every answer counts"
    template = "test_questions/opinion.html"
    max_choices = 4

    def problems(self, choices):
        problems = super().problems(choices)
        problems += [
            Problem("opinion-marked", "is marked correct; an opinion has no right answer", choice=position)
            for position, choice in enumerate(choices, start=1)
            if choice.is_correct
        ]
        return problems

    def is_right(self, choice):
        return True

    def right_choice(self, choices):
        return None


OPINION_TEMPLATE = """<ul class="opinion-choices" data-opinion>
{% for choice in quiz.current.choices.all %}<li><label><input type="radio" name="choice" value="{{ choice.pk }}">
{{ choice.text }}</label></li>{% endfor %}
</ul>
"""

OPINION_YAML = """- type: opinion
  prompt: Which part did you enjoy most?
  choices:
    - text: The queries
    - text: The keys
    - text: The softmax
"""


@pytest.fixture
def opinion(settings, tmp_path):
    templates = tmp_path / "templates"
    (templates / "test_questions").mkdir(parents=True)
    (templates / "test_questions" / "opinion.html").write_text(OPINION_TEMPLATE)
    engine = settings.TEMPLATES[0]
    settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], templates]}]
    question_type_register(Opinion)
    yield Opinion
    question_type_unregister(Opinion.kind)


def test_a_new_question_type_imports_exports_and_is_refused_by_its_own_rules(opinion, course_dir, tmp_path):
    quiz = course_dir / Q
    quiz.write_text(quiz.read_text() + OPINION_YAML)
    course = course_import(path=course_dir).course
    question = Question.objects.get(chapter__course=course, position=3)
    # The single-choice rules would refuse a question with no correct choice and no explanations.
    assert question.kind == "opinion" and not question.choices.filter(is_correct=True).exists()

    course_export(course=course, path=tmp_path / "out")
    assert "- type: opinion\n  prompt: Which part" in (tmp_path / "out" / Q).read_text()
    assert "type:" not in (tmp_path / "out" / Q).read_text().split("- type: opinion")[0]  # the default goes unsaid
    assert not course_import(path=tmp_path / "out").changed

    edit(quiz, "    - text: The keys\n", "    - text: The keys\n      correct: true\n")
    refused = _importer_says(course_dir)
    assert str(refused) == f"{Q}:20: question 3, choice 2 is marked correct; an opinion has no right answer"
    edit(quiz, "type: opinion", "type: poll")
    assert _importer_says(course_dir).problem.startswith("question 3: unknown question type 'poll' (known: ")


def test_a_new_question_type_is_offered_and_checked_by_the_admin(opinion, client, course_dir, admin_user):
    quiz = course_dir / Q
    quiz.write_text(quiz.read_text() + OPINION_YAML)
    course = course_import(path=course_dir).course
    question = Question.objects.get(chapter__course=course, position=3)
    client.force_login(admin_user)
    url = reverse("admin:courses_question_change", args=[question.pk])
    page = client.get(url)
    assert '<option value="opinion" selected>Opinion: every answer counts</option>' in page.content.decode()

    data = admin_form_data(page)
    data["choices-0-is_correct"] = "on"
    refused = client.post(url, data)
    assert refused.status_code == 200
    said = "Choice 1 (&#x27;The queries&#x27;) is marked correct; an opinion has no right answer."
    assert said in refused.content.decode()

    data.pop("choices-0-is_correct")
    data["prompt"] = "Which part did you like best?"
    saved = client.post(url, data)
    assert saved.status_code == 302, saved.context and saved.context["errors"]
    assert Question.objects.get(pk=question.pk).prompt == "Which part did you like best?"


def test_a_new_question_type_is_graded_and_shown_by_its_class_and_template(opinion, client, course_dir, learner):
    quiz = course_dir / Q
    quiz.write_text(quiz.read_text() + OPINION_YAML)
    course = course_import(path=course_dir).course
    chapter = course.chapters.get(slug="attention")
    first, second, third = chapter.questions.order_by("position")
    for question in (first, second):
        quiz_answer(user=learner, question=question, choice=question.choices.get(is_correct=True))

    client.force_login(learner)
    page = client.get(reverse("frontend:chapter", args=[course.slug, chapter.slug])).content.decode()
    assert "data-opinion" in page and "Which part did you enjoy most?" in page

    result = quiz_answer(user=learner, question=third, choice=third.choices.get(position=3))
    assert result.is_correct and result.recorded
    assert result.quiz_finished and result.score == 3
    review = client.get(reverse("frontend:chapter", args=[course.slug, chapter.slug])).content.decode()
    assert review.count("Right answer:") == 2  # an opinion has none to show

"""The LTI tests' platform (tests/lti/platform.py: lti1p3platform over HTTP), its registration with the
tool, and a small course to launch: part 1 has two exercises and a two-question quiz, part 2 one
exercise and no quiz, part 3 is a draft."""

from urllib.parse import urlsplit

import pytest
import requests

from courses.models import Chapter, Choice, Course, Exercise, Question
from lti.models import Deployment, Platform
from lti.services.keys import tool_jwks
from tests.lti.platform import TestPlatform, launch_form


def course_make(slug: str = "lti-course") -> Course:
    course = Course.objects.create(slug=slug, title="Attention, launched", published=True)
    one = Chapter.objects.create(course=course, number=1, slug="first-steps", title="First steps", published=True)
    two = Chapter.objects.create(course=course, number=2, slug="second-steps", title="Second steps", published=True)
    Chapter.objects.create(course=course, number=3, slug="draft-part", title="Not yet", published=False)
    for position, slug_ in enumerate(["warm-up", "softmax-by-hand"], start=1):
        Exercise.objects.create(chapter=one, slug=slug_, position=position, title=slug_.replace("-", " ").title())
    Exercise.objects.create(chapter=two, slug="masking", position=1, title="Masking")
    for position in (1, 2):
        question = Question.objects.create(chapter=one, position=position, prompt=f"Question {position}?")
        for choice in (1, 2):
            Choice.objects.create(question=question, position=choice, text=f"Choice {choice}", is_correct=choice == 2)
    return course


@pytest.fixture
def lti_course(db) -> Course:
    return course_make()


@pytest.fixture
def platform():
    started = TestPlatform().start()
    yield started
    started.stop()


def register(platform: TestPlatform, *courses: Course, name: str = "Test LMS") -> Platform:
    registration = Platform.objects.create(
        name=name,
        issuer=platform.url,
        client_id=platform.client_id,
        auth_login_url=f"{platform.url}/auth",
        token_url=f"{platform.url}/token",
        keyset_url=f"{platform.url}/jwks",
    )
    Deployment.objects.create(platform=registration, deployment_id=platform.deployment_id)
    registration.courses.add(*courses)
    return registration


@pytest.fixture
def registered(db, platform, lti_course) -> Platform:
    """The platform registered with the tool (which Django's test client serves: the platform gets
    the tool's key set itself, there is no tool URL to fetch it from)."""
    registration = register(platform, lti_course)
    platform.tool("http://testserver", key_set=tool_jwks())
    return registration


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def platform_form(client, platform: TestPlatform, **start) -> tuple[str, dict]:
    """A launch up to the platform's auto-posting form: the tool's login initiation (in `client`),
    then the platform's authorization endpoint over HTTP. Returns the form's action and fields."""
    login = client.get(path_of(platform.login_url(**start)))
    assert login.status_code == 302, login.content.decode()[:500]
    answer = requests.get(login["Location"], timeout=10)
    assert answer.status_code == 200, answer.text
    return launch_form(answer.text)


def client_launch(client, platform: TestPlatform, **start):
    """A whole launch in Django's test client: login initiation, the platform's id_token, the post."""
    action, fields = platform_form(client, platform, **start)
    return client.post(path_of(action), fields)

import pytest
from django.core.cache import cache

from accounts.models import User
from accounts.services import user_create

# The worker and web server fixtures, imported once here: a session fixture imported into each test
# module would be a separate fixture per module, each starting a worker and a web server of its own.
from tests.runner.worker import *  # noqa: F403


@pytest.fixture(autouse=True)
def _fresh_cache():
    # The cache holds per-user state (the failed-login throttle); no test may see another's.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def make_user(db):
    counter = iter(range(1, 10_000))

    def make(role: str = User.Role.LEARNER, username: str | None = None, password: str = "pw-for-tests-1"):
        return user_create(username=username or f"{role}{next(counter)}", password=password, role=role)

    return make


@pytest.fixture
def learner(make_user):
    return make_user(User.Role.LEARNER)


@pytest.fixture
def instructor(make_user):
    return make_user(User.Role.INSTRUCTOR)


@pytest.fixture
def admin_user(make_user):
    return make_user(User.Role.ADMIN)

import pytest
from django.core.cache import cache
from django.db import connections

from accounts.models import User
from accounts.services import user_create
from teaching import later

# The spaced review's clock, moved by the tests that need hours to pass (courses.services.review.now).
from tests.learning.review_support import clock  # noqa: F401

# The worker and web server fixtures, imported once here: a session fixture imported into each test
# module would be a separate fixture per module, each starting a worker and a web server of its own.
from tests.runner.worker import *  # noqa: F403

# What a test waits on, read from the fixtures it takes, so the markers hold for every test that
# uses them and not only where a module says so: `make test-fast` leaves out both.
BROWSER_FIXTURES = {"browser", "chromium"}
SERVICE_FIXTURES = {
    # a Celery worker or a web server process
    "run_worker",
    "any_backend_worker",
    "worker_switch",
    "worker_backend",
    "web_server",
    # a sandbox backend, the demo course's exercises in the harness, the embedded platform, Redis
    "sandbox_backend",
    "local_backend",
    "docker_backend",
    "warm_backend",
    "exercise_run",
    "local_sandbox",
    "embedded",
    "redis_broker",
}


def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if fixtures & SERVICE_FIXTURES:
            item.add_marker(pytest.mark.services)


@pytest.fixture(scope="session", autouse=True)
def _test_database_left_alone_at_the_end(django_db_setup, django_db_blocker):
    """pytest-django cannot drop the test database while any session uses it. Closing a pool closes
    only the connections handed back to it, and a browser test's queries run in a context that
    Playwright's greenlets leave behind, with a connection nothing can reach to hand back: so close
    the pools, then end any session still on the test database (the worker and web server fixtures
    have stopped by then)."""
    yield
    with django_db_blocker.unblock():
        for connection in connections.all():
            connection.close()
            if hasattr(connection, "close_pool"):
                connection.close_pool()
        connection = connections["default"]
        if connection.vendor == "postgresql":
            with connection._nodb_cursor() as cursor:  # on the server's own database, as Django's drop
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    [connection.settings_dict["NAME"]],
                )


@pytest.fixture(autouse=True)
def _no_counts_left_waiting():
    """A streamed response a test leaves unread keeps its request's unit open (teaching.later), and
    a later test's counts would wait for its end: each test starts with none open."""
    later.abandon()
    yield
    later.abandon()


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

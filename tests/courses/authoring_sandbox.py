"""The sandbox that validates exercises on save in tests: the real local backend (bubblewrap), in
the session's real Celery worker where Redis is set, in the test's process where it is not."""

import pytest

from tests.runner.conftest import backend_or_skip


@pytest.fixture
def local_backend(settings, request):
    backend_or_skip("local")
    settings.RUNNER_BACKEND = "local"
    if settings.REDIS_URL:
        request.getfixturevalue("run_worker")  # the session's worker, on the local backend

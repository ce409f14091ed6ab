"""Tests: fast hashing, in-memory email. DATABASE_URL and REDIS_URL still select real services."""

import os
import re

# pytest-xdist runs the suite in several processes (gw0, gw1, ...). pytest-django gives each a
# PostgreSQL database of its own; here each also gets a Redis database of its own (Celery's queues,
# run streams, caps, the hosts alive), set before the base settings read REDIS_URL, and a sandbox
# scope of its own (RUNNER_SANDBOX_SCOPE), so one process's stray sweep never removes another's
# containers. The worker and web processes a test starts inherit both variables and land on the
# same database and scope.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER:
    _index = int(XDIST_WORKER.removeprefix("gw"))
    if _index > 12:
        raise RuntimeError(
            "at most 13 pytest-xdist workers: they take Redis databases 2 to 14"
            " (0 is a session without xdist, 15 the CI stack)"
        )
    if os.environ.get("REDIS_URL", "").startswith("redis://"):
        os.environ["REDIS_URL"] = re.sub(r"(/\d*)?$", f"/{2 + _index}", os.environ["REDIS_URL"], count=1)

from .base import *  # noqa: E402, F403
from .base import STATIC_ROOT, VAR_DIR  # noqa: E402

RUNNER_SANDBOX_SCOPE = f"test-{XDIST_WORKER or 'main'}"

SECRET_KEY = "test-only-key"  # noqa: S105
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ALLOWED_HOSTS = ["*"]
VAR_DIR.mkdir(parents=True, exist_ok=True)
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# whitenoise looks for STATIC_ROOT at start-up; tests never collect static files into it, and a web
# server a test starts (uvicorn) serves them from where they are.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True
# Without DATABASE_URL the tests run on SQLite as the embedded default does: a file (in WAL mode,
# with its busy timeout, base.py), not Django's shared in-memory test database, whose table locks
# fail at once where the default's file waits its turn (two requests writing at the same moment).
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{XDIST_WORKER or 'main'}.sqlite3")}  # noqa: F405

"""Tests: fast hashing, in-memory email. DATABASE_URL and REDIS_URL still select real services."""

from .base import *  # noqa: F403
from .base import STATIC_ROOT, VAR_DIR

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

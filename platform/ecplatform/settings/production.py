"""Production: refuses to start without a real secret key; HTTPS-only cookies and HSTS."""

from django.core.exceptions import ImproperlyConfigured

from ecplatform.env import env_bool, env_int

from .base import *  # noqa: F403
from .base import DEBUG, SECRET_KEY

if not SECRET_KEY or len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
    raise ImproperlyConfigured("SECRET_KEY must be set to a random value of at least 50 characters in production.")
if DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in production.")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

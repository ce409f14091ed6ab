"""Failed-login lockout, on every path a password is tried: the login page, the admin's login and
POST /api/auth/token/.

Why django-axes and not DRF throttles plus a lockout of our own: a throttle covers only DRF views,
so the login page and the admin would each need their own, and the lockout an admin lifts must be
kept where an admin can see and clear it (a cache cannot be listed). django-axes hooks Django's
own authentication (a backend that refuses a locked-out client, and the user_login_failed signal),
so every form or view that calls authenticate() with the request is covered, including ones added
later; it keeps failures in the database with an admin page, and it is maintained. What is ours:
which client is counted (the username, and separately the address, taken after
TrustedProxyMiddleware, so a forged X-Forwarded-For cannot dodge the count), and the answer a
locked-out client gets (JSON for the API, the login page otherwise).
"""

from axes.backends import AxesStandaloneBackend
from axes.utils import reset
from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render

LOCKED_MESSAGE = "Too many failed attempts. Wait {minutes} minutes, then try again, or ask an admin to lift the lock."


class LockoutBackend(AxesStandaloneBackend):
    """Refuses a locked-out client before any password is checked. A login with no HTTP request
    (a management command, the test client's login()) has no client to count and is let through
    to the next backend."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def username_for_lockout(request, credentials) -> str | None:
    """Counts "Ada", "ada " and "ada" as one username, as logging in does."""
    username = (credentials or {}).get("username")
    if username is None and request is not None and request.method == "POST":
        username = request.POST.get("username")
    return username.strip().lower() if isinstance(username, str) else username


def locked_message() -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, round(settings.LOGIN_FAILURE_WINDOW_S / 60)))


def lockout_response(request, original_response=None, credentials=None):
    """429 with Retry-After: JSON with a `detail` for the API, the login page with the message for
    people."""
    message = locked_message()
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(settings.LOGIN_FAILURE_WINDOW_S)
    return response


def login_lockout_lift(*, username: str) -> int:
    """Forget the failed logins of this username (and so lift its lockout). Returns how many
    records were removed."""
    return reset(username=username_for_lockout(None, {"username": username}))

"""Writes for accounts: creating users and the failed-login throttle."""

import hashlib

from django.conf import settings
from django.core.cache import cache

from accounts.models import User


def user_create(*, username: str, password: str, email: str = "", role: str = User.Role.LEARNER) -> User:
    user = User(username=username, email=email, role=role)
    user.set_password(password)
    user.full_clean(exclude=["password"])
    user.save()
    return user


def _throttle_keys(*, username: str, ip: str) -> list[str]:
    name = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"login-fail:user:{name}", f"login-fail:ip:{ip}"]


def login_is_throttled(*, username: str, ip: str) -> bool:
    limit = settings.LOGIN_FAILURE_LIMIT
    return any((cache.get(key) or 0) >= limit for key in _throttle_keys(username=username, ip=ip))


def login_failure_record(*, username: str, ip: str) -> None:
    window = settings.LOGIN_FAILURE_WINDOW_S
    for key in _throttle_keys(username=username, ip=ip):
        # add() is a no-op when the key exists, so the window starts at the first failure.
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:
            cache.set(key, 1, timeout=window)


def login_failures_clear(*, username: str, ip: str) -> None:
    cache.delete(_throttle_keys(username=username, ip=ip)[0])


def user_theme_set(*, user: User, theme: str) -> None:
    if theme not in User.Theme.values:
        raise ValueError(f"Unknown theme {theme!r}.")
    user.theme = theme
    user.save(update_fields=["theme"])

"""Writes for accounts: creating users, API tokens and lifting a login lockout."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.lockout import login_lockout_lift
from accounts.models import User

__all__ = [
    "api_token_is_expired",
    "api_token_issue",
    "login_lockout_lift",
    "user_create",
    "user_theme_set",
]


def user_create(*, username: str, password: str, email: str = "", role: str = User.Role.LEARNER) -> User:
    user = User(username=username, email=email, role=role)
    user.set_password(password)
    user.full_clean(exclude=["password"])
    user.save()
    return user


def api_token_is_expired(*, token: Token, now=None) -> bool:
    return token.created < (now or timezone.now()) - timedelta(days=settings.API_TOKEN_TTL_DAYS)


def api_token_issue(*, user: User) -> Token:
    """The user's API token: the current one while it lasts, a fresh one once it has expired (the
    old key stops working at once)."""
    with transaction.atomic():
        token, created = Token.objects.select_for_update().get_or_create(user=user)
        if not created and api_token_is_expired(token=token):
            token.delete()
            token = Token.objects.create(user=user)
    return token


def user_theme_set(*, user: User, theme: str) -> None:
    if theme not in User.Theme.values:
        raise ValueError(f"Unknown theme {theme!r}.")
    user.theme = theme
    user.save(update_fields=["theme"])

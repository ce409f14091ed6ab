"""Logging in. Sign-up, which may come with a cohort's invite, is teaching's (teaching/signup.py):
accounts imports no app."""

from django.conf import settings
from django.contrib.auth import views as auth_views


class LoginView(auth_views.LoginView):
    # Failed attempts are counted, and locked-out clients refused, by accounts.lockout.
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "signup_open": settings.SIGNUP_OPEN}

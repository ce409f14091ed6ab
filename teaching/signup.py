"""Sign-up, open while SIGNUP_OPEN and always with a cohort's invite (?invite=<code>, or coming
from its /join/<code>/ link): the new account joins that cohort. Served at /accounts/signup/
(ecplatform/urls.py) beside accounts' own pages; the form is accounts'."""

import re

from django.conf import settings
from django.contrib.auth import login
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from accounts.forms import SignupForm
from teaching.models import Cohort
from teaching.selectors import cohort_get_by_invite_code
from teaching.services.cohorts import cohort_member_add

JOIN_PATH_RE = re.compile(r"/join/(?P<code>[^/]+)/")


@require_http_methods(["GET", "POST"])
def signup(request):
    if request.user.is_authenticated:
        return redirect("frontend:catalog")
    cohort = _invited_cohort(request)
    if not settings.SIGNUP_OPEN and cohort is None:
        return render(request, "registration/signup_closed.html", status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        if cohort is not None:
            cohort_member_add(cohort=cohort, user=user)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if cohort is not None and not _safe_next(request):
            return redirect("frontend:course", course_slug=cohort.course.slug)
        return redirect(_safe_next(request) or "frontend:catalog")
    return render(request, "registration/signup.html", {"form": form, "cohort": cohort})


def _invited_cohort(request) -> Cohort | None:
    code = request.GET.get("invite", "")
    if not code:
        match = JOIN_PATH_RE.fullmatch(request.GET.get("next", ""))
        code = match.group("code") if match else ""
    if not code:
        return None
    try:
        return cohort_get_by_invite_code(invite_code=code)
    except Http404:
        return None


def _safe_next(request) -> str:
    """The page to return to after sign-up, only if it is on this site."""
    target = request.GET.get("next", "")
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""

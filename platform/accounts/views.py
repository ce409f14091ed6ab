from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from accounts.forms import SignupForm


@require_http_methods(["GET", "POST"])
def signup(request):
    if request.user.is_authenticated:
        return redirect("frontend:catalog")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(_safe_next(request) or "frontend:catalog")
    return render(request, "registration/signup.html", {"form": form})


def _safe_next(request) -> str:
    """The page to return to after sign-up, only if it is on this site."""
    target = request.GET.get("next", "")
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""


class LoginView(auth_views.LoginView):
    # Failed attempts are counted, and locked-out clients refused, by accounts.lockout.
    redirect_authenticated_user = True

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm

from accounts import services
from accounts.models import User


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; used only to reset your password.")

    class Meta:
        model = User
        fields = ("username", "email")


class ThrottledAuthenticationForm(AuthenticationForm):
    """Refuses further attempts once a username or address has failed too often."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "throttled": "Too many failed attempts. Wait a few minutes, then try again.",
    }

    def _client_ip(self) -> str:
        return self.request.META.get("REMOTE_ADDR", "") if self.request else ""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        ip = self._client_ip()
        if services.login_is_throttled(username=username, ip=ip):
            raise forms.ValidationError(self.error_messages["throttled"], code="throttled")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            services.login_failure_record(username=username, ip=ip)
            raise
        services.login_failures_clear(username=username, ip=ip)
        return cleaned

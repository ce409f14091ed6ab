from django import forms
from django.contrib.auth.forms import UserCreationForm

from accounts.models import User


class SignupForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional; used only to reset your password.")

    class Meta:
        model = User
        fields = ("username", "email")

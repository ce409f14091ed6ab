"""The public API (see DESIGN.md): each app contributes its own endpoints."""

from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("", include("courses.api_urls")),
    path("", include("runner.api_urls")),
]

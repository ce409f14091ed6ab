"""The public API (see DESIGN.md): each app contributes its own endpoints."""

from django.urls import include, path

from accounts.apis import TokenObtainApi

urlpatterns = [
    path("auth/token/", TokenObtainApi.as_view(), name="api-token"),
    path("", include("courses.api_urls")),
    path("", include("courses.review_api_urls")),
    path("", include("runner.api_urls")),
    path("", include("teaching.api_urls")),
]

"""The tool's URLs, under /lti/ (ecplatform.urls). The key set, login and launch URLs are what a
learning system's registration holds: they never change."""

from django.urls import path

from lti import views

app_name = "lti"

urlpatterns = [
    path("jwks/", views.jwks, name="jwks"),
    path("login/", views.login, name="login"),
    path("launch/", views.launch, name="launch"),
    path("deep-link/", views.deep_link, name="deep_link"),
    path("classes/", views.classes, name="classes"),
    path("classes/<int:context_id>/sync/", views.class_sync, name="class_sync"),
]

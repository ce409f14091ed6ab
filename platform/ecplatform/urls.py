from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from teaching.signup import signup

urlpatterns = [
    path("admin/", admin.site.urls),
    # Sign-up may join a cohort (teaching's); the rest of /accounts/ is accounts' own.
    path("accounts/signup/", signup, name="signup"),
    path("accounts/", include("accounts.urls")),
    path("api/", include("ecplatform.api_urls")),
    # LTI 1.3: key set, login, launch, deep linking (lti/urls.py).
    path("lti/", include("lti.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("frontend.urls")),
]

handler403 = "frontend.views.forbidden"

from django.urls import include, path

from frontend import views

app_name = "frontend"

urlpatterns = [
    path("", views.catalog, name="catalog"),
    path("courses/<slug:course_slug>/", views.course_detail, name="course"),
    # Before the chapter route, so the glossary is never taken for a chapter slug.
    path("courses/<slug:course_slug>/glossary/", views.glossary, name="glossary"),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/", views.chapter_detail, name="chapter"),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/quiz/", views.quiz_answer, name="quiz_answer"),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/place/", views.place_save, name="place_save"),
    path("theme/", views.theme_save, name="theme_save"),
    path("preview/chapters/<int:chapter_id>/", views.chapter_preview, name="chapter_preview"),
    path("", include("frontend.dashboard_urls")),
]

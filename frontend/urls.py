from django.urls import include, path

from frontend import completion_views, review_views, views

app_name = "frontend"

urlpatterns = [
    path("", views.catalog, name="catalog"),
    path("courses/<slug:course_slug>/", views.course_detail, name="course"),
    # Before the chapter route, so the glossary and the completion page are never taken for a chapter
    # slug (these slugs are reserved: courses.models.RESERVED_CHAPTER_SLUGS).
    path("courses/<slug:course_slug>/glossary/", views.glossary, name="glossary"),
    path("courses/<slug:course_slug>/complete/", completion_views.course_complete, name="course_complete"),
    path("courses/<slug:course_slug>/complete/notebook/", completion_views.code_notebook, name="code_notebook"),
    path("courses/<slug:course_slug>/complete/package/", completion_views.code_package, name="code_package"),
    # Reserved too: the learner's spaced review of the course's quiz questions.
    path("courses/<slug:course_slug>/review/", review_views.review_page, name="review"),
    path("courses/<slug:course_slug>/review/answer/", review_views.review_answer, name="review_answer"),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/", views.chapter_detail, name="chapter"),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/quiz/", views.quiz_answer, name="quiz_answer"),
    path(
        "courses/<slug:course_slug>/<slug:chapter_slug>/hints/<int:exercise_id>/",
        views.hint_reveal,
        name="hint_reveal",
    ),
    path("courses/<slug:course_slug>/<slug:chapter_slug>/place/", views.place_save, name="place_save"),
    path("theme/", views.theme_save, name="theme_save"),
    path("preview/chapters/<int:chapter_id>/", views.chapter_preview, name="chapter_preview"),
    path("", include("teaching.urls")),
]

"""Instructor dashboards and cohort invites: included from frontend/urls.py, so their names stay in
the "frontend" namespace (frontend:teach_course)."""

from django.urls import path

from teaching import views

urlpatterns = [
    path("teach/", views.teach_home, name="teach_home"),
    path("teach/<slug:course_slug>/", views.course_dashboard, name="teach_course"),
    path("teach/<slug:course_slug>/learners/<int:learner_id>/", views.learner_detail, name="teach_learner"),
    path("teach/<slug:course_slug>/export/learners.csv", views.learners_csv, name="teach_learners_csv"),
    path("teach/<slug:course_slug>/export/questions.csv", views.questions_csv, name="teach_questions_csv"),
    path("teach/<slug:course_slug>/cohorts/", views.cohort_create, name="teach_cohort_create"),
    path("join/<str:invite_code>/", views.cohort_join, name="cohort_join"),
]

from django.urls import path

from teaching import apis as dashboard_apis

urlpatterns = [
    path(
        "teach/courses/<slug:course_slug>/dashboard/",
        dashboard_apis.CourseDashboardApi.as_view(),
        name="teach-dashboard",
    ),
    path(
        "teach/courses/<slug:course_slug>/learners/<int:learner_id>/",
        dashboard_apis.LearnerDetailApi.as_view(),
        name="teach-learner",
    ),
]

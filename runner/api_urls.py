from django.urls import path

from runner import apis, attempt_apis

urlpatterns = [
    path("runs/", apis.RunCreateApi.as_view(), name="run-create"),
    path("runs/<uuid:run_id>/", apis.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<uuid:run_id>/events/", apis.RunEventsApi.as_view(), name="run-events"),
    path("runs/<uuid:run_id>/stop/", apis.RunStopApi.as_view(), name="run-stop"),
    path("exercises/<int:exercise_id>/attempts/", attempt_apis.AttemptListApi.as_view(), name="attempt-list"),
    path(
        "exercises/<int:exercise_id>/attempts/<uuid:run_id>/",
        attempt_apis.AttemptDetailApi.as_view(),
        name="attempt-detail",
    ),
]

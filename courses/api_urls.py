from django.urls import path

from courses import apis

urlpatterns = [
    path("exercises/", apis.ExerciseListApi.as_view(), name="exercise-list"),
    path("exercises/<int:exercise_id>/code/", apis.ExerciseCodeApi.as_view(), name="exercise-code"),
]

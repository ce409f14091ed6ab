from django.urls import path

from courses import apis

urlpatterns = [
    path("exercises/", apis.ExerciseListApi.as_view(), name="exercise-list"),
]

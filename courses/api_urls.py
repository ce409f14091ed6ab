from django.urls import path

from courses import apis, hint_apis, quiz_apis

urlpatterns = [
    path("exercises/", apis.ExerciseListApi.as_view(), name="exercise-list"),
    path("exercises/<int:exercise_id>/code/", apis.ExerciseCodeApi.as_view(), name="exercise-code"),
    path("exercises/<int:exercise_id>/hints/", hint_apis.ExerciseHintsApi.as_view(), name="exercise-hints"),
    path("chapters/<int:chapter_id>/quiz/", quiz_apis.QuizStateApi.as_view(), name="chapter-quiz"),
    path("quiz/answers/", quiz_apis.QuizAnswerCreateApi.as_view(), name="quiz-answer-create"),
]

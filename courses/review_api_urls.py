"""The spaced review's endpoints (courses/review_apis.py), beside courses/api_urls.py's."""

from django.urls import path

from courses import review_apis

urlpatterns = [
    path("courses/<int:course_id>/review/", review_apis.ReviewStateApi.as_view(), name="course-review"),
    path("review/answers/", review_apis.ReviewAnswerCreateApi.as_view(), name="review-answer-create"),
]

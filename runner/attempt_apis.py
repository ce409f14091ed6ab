"""A learner's attempts at an exercise: every press of Run is one, kept with its code. The editor's
history panel lists them, compares one with the editor and puts one back. Only ever the requesting
learner's own, for an exercise they may open (404 otherwise, 403 for a course by invitation)."""

import uuid

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.selectors import exercise_get_for_user
from runner import selectors
from runner.models import Run

NOT_FOUND = OpenApiResponse(description="No such exercise (or attempt) for this learner.")
INVITE_REQUIRED = OpenApiResponse(description="The course is by invitation and the learner has not joined it.")


def attempt_failure(run: Run) -> str:
    """The stored failure line; a run ended before it was stored shows its error's name, if any."""
    return run.failure or run.error_name


class AttemptSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    status = serializers.CharField(help_text="queued, running, succeeded, failed, timed_out or error")
    passed = serializers.BooleanField()
    failure = serializers.SerializerMethodField(help_text="What went wrong, in one line; empty for a pass.")

    def get_failure(self, run: Run) -> str:
        return "" if run.passed else attempt_failure(run)


class AttemptListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        count = serializers.IntegerField(help_text="All of the learner's attempts at the exercise.")
        attempts = AttemptSerializer(many=True, help_text="Newest first, at most 50.")
        next_before = serializers.UUIDField(
            allow_null=True, help_text="Pass as `before` for the older ones; null when there are none."
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("before", OpenApiTypes.UUID, description="Only attempts older than this one."),
        ],
        responses={200: OutputSerializer, 403: INVITE_REQUIRED, 404: NOT_FOUND},
        summary="The learner's attempts at an exercise",
        operation_id="exercise_attempts_list",
    )
    def get(self, request, exercise_id: int):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        before = None
        if request.query_params.get("before"):
            before = selectors.attempt_get_for_learner(
                user=request.user, exercise=exercise, run_id=_uuid(request.query_params["before"])
            )
        page = selectors.attempt_list_for_learner(user=request.user, exercise=exercise, before=before)
        more = len(page) > selectors.ATTEMPTS_PAGE
        page = page[: selectors.ATTEMPTS_PAGE]
        data = {
            "count": selectors.attempt_count_for_learner(user=request.user, exercise=exercise),
            "attempts": page,
            "next_before": page[-1].pk if more else None,
        }
        return Response(self.OutputSerializer(data).data)


class AttemptDetailApi(APIView):
    class OutputSerializer(AttemptSerializer):
        code = serializers.CharField(help_text="The code that was run.")

    @extend_schema(
        responses={200: OutputSerializer, 403: INVITE_REQUIRED, 404: NOT_FOUND},
        summary="One of the learner's attempts, with its code",
        operation_id="exercise_attempt_retrieve",
    )
    def get(self, request, exercise_id: int, run_id):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        run = selectors.attempt_get_for_learner(user=request.user, exercise=exercise, run_id=run_id)
        return Response(self.OutputSerializer(run).data)


def _uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Http404("No such attempt.") from None

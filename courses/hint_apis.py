"""The hints API: an exercise's hints as the requesting learner sees them, and revealing the next."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.apis import INVITE_REQUIRED_RESPONSE
from courses.models import Exercise
from courses.rendering import hint_html
from courses.selectors import exercise_get_for_user, exercise_hints_for_learner, glossary_list_for_course
from courses.services.hints import HintOutOfTurnError, hint_reveal


class HintOutputSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    text = serializers.CharField(help_text="Markdown, as the author wrote it.")
    html = serializers.CharField(help_text="The text rendered as the chapter page shows it (sanitised HTML).")
    revealed_at = serializers.DateTimeField()


class ExerciseHintsOutputSerializer(serializers.Serializer):
    exercise = serializers.IntegerField()
    count = serializers.IntegerField(help_text="How many hints the exercise has.")
    revealed = HintOutputSerializer(many=True, help_text="The hints this learner revealed, in order.")
    next = serializers.IntegerField(allow_null=True, help_text="The position of the hint to reveal next (null: none).")


def hints_output(*, user, exercise: Exercise) -> dict:
    state = exercise_hints_for_learner(user=user, exercises=[exercise]).get(exercise.pk)
    revealed = state.revealed if state else []
    glossary = glossary_list_for_course(course=exercise.chapter.course) if revealed else []
    return {
        "exercise": exercise.pk,
        "count": state.count if state else 0,
        "revealed": [
            {
                "position": hint.position,
                "text": hint.text,
                "html": hint_html(text=hint.text, glossary=glossary),
                "revealed_at": hint.revealed_at,
            }
            for hint in revealed
        ],
        "next": state.next_position if state else None,
    }


class ExerciseHintsApi(APIView):
    """Only ever the requesting learner's own reveals."""

    class InputSerializer(serializers.Serializer):
        position = serializers.IntegerField(
            min_value=1, help_text="The hint to reveal: the next one (`next`), or one already revealed (no change)."
        )

    @extend_schema(
        responses={
            200: ExerciseHintsOutputSerializer,
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such exercise."),
        },
        summary="The learner's hints for an exercise",
        description="How many hints the exercise has, the ones this learner revealed (text and HTML) and which "
        "one comes next. Hints not yet revealed are never sent.",
    )
    def get(self, request, exercise_id: int):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        return Response(ExerciseHintsOutputSerializer(hints_output(user=request.user, exercise=exercise)).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: ExerciseHintsOutputSerializer,
            400: OpenApiResponse(description="No such hint, or not the next one (hints come one at a time)."),
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such exercise."),
        },
        summary="Reveal the next hint of an exercise",
        description="Reveals hint `position` (the next one) and answers as GET does. Asking again for a hint "
        "already revealed changes nothing, so a double click reveals one hint.",
    )
    def post(self, request, exercise_id: int):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            hint_reveal(user=request.user, exercise=exercise, position=data.validated_data["position"])
        except HintOutOfTurnError as exc:
            raise exceptions.ValidationError({"detail": str(exc), "position": [str(exc)]}) from exc
        return Response(ExerciseHintsOutputSerializer(hints_output(user=request.user, exercise=exercise)).data)

"""The courses API: what a signed-in user may run, and the code they keep per exercise."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.models import Exercise, ExerciseState
from courses.selectors import exercise_get_for_user, exercise_list_for_user, exercise_state_get
from courses.services.progress import ANY_BASE, CodeConflictError, exercise_code_save
from ecplatform.api import CodeField, request_code_data
from ecplatform.code import CodeRefusedError

# Every learner call in a course by invitation that does not admit the caller (courses.selectors).
INVITE_REQUIRED_RESPONSE = OpenApiResponse(description="The course is by invitation and the learner has not joined it.")


class ExerciseListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        slug = serializers.CharField()
        title = serializers.CharField()
        chapter = serializers.CharField(source="chapter.slug", help_text="The chapter's slug.")
        chapter_number = serializers.IntegerField(source="chapter.number")
        course = serializers.CharField(source="chapter.course.slug", help_text="The course's slug.")
        needs_gpu = serializers.BooleanField()
        time_limit_s = serializers.IntegerField()

    @extend_schema(
        responses={200: OutputSerializer(many=True)},
        summary="Exercises the user may run",
        description="Every exercise in the chapters the user may open, in course and chapter order. "
        "`chapter` and `course` are slugs.",
    )
    def get(self, request):
        exercises = exercise_list_for_user(user=request.user).order_by(
            "chapter__course__slug", "chapter__number", "position"
        )
        return Response(self.OutputSerializer(exercises, many=True).data)


class ExerciseCodeApi(APIView):
    """The learner's latest code for one exercise (the starter code until they save their own),
    and whether its check has passed. Only ever the requesting user's own state."""

    class InputSerializer(serializers.Serializer):
        code = CodeField()
        base = serializers.DateTimeField(
            required=False,
            allow_null=True,
            help_text="The saved_at this code was edited from (null: the starter code). With it, a save made "
            "elsewhere since is a 409 that carries the other code; without it, the last save wins.",
        )

    class OutputSerializer(serializers.Serializer):
        exercise = serializers.IntegerField()
        code = serializers.CharField()
        saved = serializers.BooleanField(help_text="False while the code is still the starter code.")
        saved_at = serializers.DateTimeField(allow_null=True)
        passed = serializers.BooleanField()
        passed_at = serializers.DateTimeField(allow_null=True)

    @staticmethod
    def _output(*, exercise: Exercise, state: ExerciseState | None) -> dict:
        saved = state is not None and state.code_saved_at is not None
        passed_at = state.passed_at if state is not None else None
        return {
            "exercise": exercise.pk,
            "code": state.code if saved else exercise.starter_code,
            "saved": saved,
            "saved_at": state.code_saved_at if saved else None,
            "passed": passed_at is not None,
            "passed_at": passed_at,
        }

    @extend_schema(
        responses={
            200: OutputSerializer,
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such exercise."),
        },
        summary="The learner's code for an exercise",
    )
    def get(self, request, exercise_id: int):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        state = exercise_state_get(user=request.user, exercise=exercise)
        return Response(self.OutputSerializer(self._output(exercise=exercise, state=state)).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(
                description="Code over RUNNER_MAX_CODE_BYTES (64 KiB by default), with a NUL or a lone surrogate, "
                "or no code."
            ),
            409: OpenApiResponse(
                description="With `base`: the code was saved elsewhere since; the body is the other save "
                "(code, saved_at) and a detail."
            ),
            413: OpenApiResponse(description="A request body far over the code limit."),
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such exercise."),
        },
        summary="Save the learner's code for an exercise",
    )
    def put(self, request, exercise_id: int):
        exercise = exercise_get_for_user(user=request.user, exercise_id=exercise_id)
        data = self.InputSerializer(data=request_code_data(request))
        data.is_valid(raise_exception=True)
        base = data.validated_data.get("base", ANY_BASE)
        try:
            state = exercise_code_save(
                user=request.user, exercise=exercise, code=data.validated_data["code"], base=base
            )
        except CodeRefusedError as exc:
            raise exceptions.ValidationError({"detail": str(exc), "code": [str(exc)]}) from exc
        except CodeConflictError as exc:
            other = self.OutputSerializer(self._output(exercise=exercise, state=exc.state)).data
            return Response({"detail": str(exc), **other}, status=status.HTTP_409_CONFLICT)
        return Response(self.OutputSerializer(self._output(exercise=exercise, state=state)).data)

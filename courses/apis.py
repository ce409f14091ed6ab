"""The courses API: what a signed-in user may run."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from courses.selectors import exercise_list_for_user


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

"""The dashboards' data for API clients: one course's dashboard and one learner in it, with the
pages' access rules (404 for anyone who does not teach the course) and the same filters."""

from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from teaching import selectors as dashboards

FILTER_PARAMETERS = [
    OpenApiParameter("cohort", OpenApiTypes.INT, description="Only this cohort's learners."),
    OpenApiParameter("start", OpenApiTypes.DATE, description="Count events on or after this day (YYYY-MM-DD)."),
    OpenApiParameter("end", OpenApiTypes.DATE, description="Count events up to and including this day."),
]


def _filters(request, course) -> dashboards.DashboardFilters:
    try:
        return dashboards.dashboard_filters_from_params(course=course, params=request.query_params)
    except ValidationError as invalid:
        raise exceptions.ValidationError(invalid.message_dict) from invalid


class _CohortSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    invite_code = serializers.CharField()
    member_count = serializers.IntegerField()


class _FunnelSerializer(serializers.Serializer):
    chapter = serializers.IntegerField(source="chapter.id")
    number = serializers.IntegerField(source="chapter.number")
    title = serializers.CharField(source="chapter.title")
    started = serializers.IntegerField()
    quiz_finished = serializers.IntegerField()
    completed = serializers.IntegerField()
    completed_rate = serializers.FloatField(allow_null=True, help_text="Completed, of the learners counted.")


class _QuestionStatsSerializer(serializers.Serializer):
    question = serializers.IntegerField(source="question.id")
    part = serializers.IntegerField(source="question.chapter.number")
    position = serializers.IntegerField(source="question.position")
    prompt = serializers.CharField(source="question.prompt")
    learners = serializers.IntegerField()
    answers = serializers.IntegerField()
    first_tries = serializers.IntegerField()
    first_try_right = serializers.IntegerField()
    first_try_rate = serializers.FloatField(allow_null=True)
    average_attempts = serializers.FloatField(allow_null=True, help_text="The try at which learners got it right.")
    top_wrong_choice = serializers.CharField(help_text="The wrong answer chosen most often; empty when none.")
    top_wrong_count = serializers.IntegerField()


class _ErrorTypeSerializer(serializers.Serializer):
    name = serializers.CharField()
    count = serializers.IntegerField()


class _ExerciseSerializer(serializers.Serializer):
    exercise = serializers.IntegerField(source="exercise.id")
    slug = serializers.CharField(source="exercise.slug")
    title = serializers.CharField(source="exercise.title")
    part = serializers.IntegerField(source="exercise.chapter.number")
    learners_ran = serializers.IntegerField()
    learners_passed = serializers.IntegerField()
    pass_rate = serializers.FloatField(allow_null=True)
    runs = serializers.IntegerField()
    timed_out = serializers.IntegerField()
    memory_stops = serializers.IntegerField()
    median_runs_to_pass = serializers.FloatField(allow_null=True)
    hints_revealed = serializers.IntegerField(help_text="Hints of the exercise revealed in the range.")
    learners_hinted = serializers.IntegerField(help_text="Learners who revealed at least one of them.")
    median_duration_ms = serializers.FloatField(
        allow_null=True, help_text="The median of the mean run time of each learner who ran it."
    )
    error_types = serializers.SerializerMethodField()

    def get_error_types(self, obj) -> list[dict]:
        return [{"name": name, "count": count} for name, count in obj.error_types]


class _StuckSerializer(serializers.Serializer):
    learner = serializers.IntegerField(source="user_id")
    username = serializers.CharField()
    last_progress_at = serializers.DateTimeField(allow_null=True)
    failed_runs = serializers.IntegerField()
    failed_exercise = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())


class _ReviewFiguresSerializer(serializers.Serializer):
    due = serializers.IntegerField(help_text="Questions due for review now, over the learners counted.")
    answers = serializers.IntegerField(help_text="Review answers given in the range.")
    right = serializers.IntegerField(help_text="Of which right.")
    retained = serializers.FloatField(allow_null=True, help_text="Right, of the review answers; null with none.")


class _FiltersSerializer(serializers.Serializer):
    cohort = serializers.IntegerField(source="cohort.id", allow_null=True, default=None)
    start = serializers.DateField(allow_null=True)
    end = serializers.DateField(allow_null=True)


class CourseDashboardApi(APIView):
    class OutputSerializer(serializers.Serializer):
        course = serializers.CharField(source="course.slug")
        filters = _FiltersSerializer()
        cohorts = _CohortSerializer(many=True)
        enrolled = serializers.IntegerField()
        active = serializers.IntegerField(help_text="Seen in the last `active_days` days.")
        active_days = serializers.IntegerField()
        funnel = _FunnelSerializer(many=True)
        questions = _QuestionStatsSerializer(many=True)
        exercises = _ExerciseSerializer(many=True)
        stuck = _StuckSerializer(many=True)
        stuck_total = serializers.IntegerField()
        review = _ReviewFiguresSerializer(help_text="Spaced review; never part of the quiz figures.")

    @extend_schema(
        parameters=FILTER_PARAMETERS,
        responses={
            200: OutputSerializer,
            400: OpenApiResponse(description="A bad filter."),
            404: OpenApiResponse(description="No such course among those the user teaches."),
        },
        summary="A course's dashboard for its instructors",
    )
    def get(self, request, course_slug: str):
        course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
        board = dashboards.course_dashboard(course=course, filters=_filters(request, course))
        return Response(self.OutputSerializer(board).data)


class _LearnerChapterSerializer(serializers.Serializer):
    chapter = serializers.IntegerField(source="chapter.id")
    number = serializers.IntegerField(source="chapter.number")
    title = serializers.CharField(source="chapter.title")
    exercises_total = serializers.IntegerField()
    exercises_passed = serializers.IntegerField()
    quiz_finished_at = serializers.DateTimeField(allow_null=True)
    quiz_score = serializers.IntegerField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)


class _AnswerSerializer(serializers.Serializer):
    question = serializers.IntegerField(source="question_id")
    part = serializers.IntegerField(source="question.chapter.number")
    prompt = serializers.CharField(source="question.prompt")
    choice = serializers.CharField(source="choice.text")
    is_correct = serializers.BooleanField()
    attempt = serializers.IntegerField()
    answered_at = serializers.DateTimeField()


class _RunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    exercise = serializers.CharField(source="exercise.slug")
    status = serializers.CharField()
    code = serializers.CharField()
    outputs = serializers.ListField(child=serializers.DictField())
    stdout = serializers.CharField()
    stderr = serializers.CharField()
    exit_code = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField()
    duration_ms = serializers.IntegerField(allow_null=True)
    error_name = serializers.CharField()
    check_passed = serializers.BooleanField(allow_null=True)
    passed = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class LearnerDetailApi(APIView):
    class OutputSerializer(serializers.Serializer):
        learner = serializers.IntegerField(source="learner.id")
        username = serializers.CharField(source="learner.username")
        enrolled_at = serializers.DateTimeField(source="enrolment.enrolled_at")
        last_seen_at = serializers.DateTimeField(source="enrolment.last_seen_at")
        chapters = _LearnerChapterSerializer(many=True)
        answers = _AnswerSerializer(many=True)
        runs = _RunSerializer(many=True, help_text=f"Newest first, {dashboards.RUNS_PER_PAGE} a page.")
        run_count = serializers.IntegerField()
        page = serializers.IntegerField()
        pages = serializers.IntegerField()

    @extend_schema(
        parameters=[OpenApiParameter("page", OpenApiTypes.INT, description="The page of runs, from 1.")],
        responses={
            200: OutputSerializer,
            404: OpenApiResponse(description="No such course among those the user teaches, or learner in it."),
        },
        summary="One learner's progress, answers and runs in a course",
    )
    def get(self, request, course_slug: str, learner_id: int):
        course = dashboards.course_get_for_teaching(user=request.user, slug=course_slug)
        learner = dashboards.learner_get_for_teaching(course=course, learner_id=learner_id)
        detail = dashboards.learner_detail(course=course, learner=learner)
        pages = Paginator(dashboards.learner_run_list(course=course, learner=learner), dashboards.RUNS_PER_PAGE)
        page = pages.get_page(request.query_params.get("page"))
        data = {
            "learner": learner,
            "enrolment": detail.enrolment,
            "chapters": detail.chapters,
            "answers": detail.answers,
            "runs": list(page),
            "run_count": pages.count,
            "page": page.number,
            "pages": pages.num_pages,
        }
        return Response(self.OutputSerializer(data).data)

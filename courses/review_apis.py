"""The spaced review API: the same review as the course's Review page, one thin view per operation.

The next question never says which choice is right; the answer's response does, with the
explanation of the choice picked, as the page shows it.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from courses import selectors, selectors_review
from courses.apis import INVITE_REQUIRED_RESPONSE
from courses.models import Choice
from courses.quiz_apis import ChoiceSerializer, ExplainedChoiceSerializer
from courses.services import review


class ReviewAnswerRejectedError(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "answer_rejected"


class ReviewNotDueApiError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_due"


class _ReviewQuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    chapter = serializers.IntegerField(source="chapter_id")
    part = serializers.IntegerField(source="chapter.number", help_text="The chapter's number: Part N.")
    kind = serializers.CharField(help_text="The question's type (courses/rules.py), e.g. single-choice.")
    prompt = serializers.CharField()
    choices = ChoiceSerializer(many=True)


def _question(question, *, user) -> dict:
    fields = ("id", "chapter_id", "chapter", "kind", "prompt")
    choices = selectors_review.review_choices_for_learner(question=question, user=user)
    return {**{name: getattr(question, name) for name in fields}, "choices": choices}


class ReviewStateApi(APIView):
    class OutputSerializer(serializers.Serializer):
        course = serializers.IntegerField(source="course.id")
        due = serializers.IntegerField(help_text="Questions due for review now.")
        scheduled = serializers.IntegerField(help_text="Questions in the learner's review, due or not.")
        next_due_at = serializers.DateTimeField(
            allow_null=True, help_text="When the earliest question is (or was) due; null with none scheduled."
        )
        question = _ReviewQuestionSerializer(
            allow_null=True, help_text="The question due longest ago, to answer now; null when nothing is due."
        )

    @extend_schema(
        responses={
            200: OutputSerializer,
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such course for this user."),
        },
        summary="The learner's spaced review in a course: how many questions are due, and the next one",
        operation_id="course_review_retrieve",
    )
    def get(self, request, course_id: int):
        course = selectors_review.course_get_by_id_for_review(user=request.user, course_id=course_id)
        at = review.now()
        summary = selectors_review.review_summary_for_learner(user=request.user, course=course, at=at)
        card = selectors_review.review_next_for_learner(user=request.user, course=course, at=at)
        data = {
            "course": course,
            "due": summary.due,
            "scheduled": summary.scheduled,
            "next_due_at": summary.next_due_at,
            "question": _question(card.question, user=request.user) if card is not None else None,
        }
        return Response(self.OutputSerializer(data).data)


class ReviewAnswerCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        question = serializers.IntegerField(help_text="A question due in the learner's review.")
        choice = serializers.IntegerField(help_text="One of that question's choices.")

    class OutputSerializer(serializers.Serializer):
        question = serializers.IntegerField(source="question.id")
        choice = serializers.IntegerField(source="choice.id")
        is_correct = serializers.BooleanField()
        recorded = serializers.BooleanField(help_text="False when this repeated the answer already stored.")
        explanation = serializers.CharField(help_text="The explanation of the choice picked, as the quiz shows it.")
        right_choice = ExplainedChoiceSerializer(allow_null=True, help_text="Null for a type with no right answer.")
        next_due_at = serializers.DateTimeField(help_text="When this question comes back.")
        due = serializers.IntegerField(help_text="Questions of the course still due for review.")

    @extend_schema(
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            200: OpenApiResponse(OutputSerializer, description="A repeated answer: nothing new was stored."),
            400: OpenApiResponse(description="No such choice, or a choice of another question."),
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such question for this user."),
            409: OpenApiResponse(
                description="The question is not due: not in the learner's review, due later (the message says "
                "when), or its schedule cannot be read."
            ),
        },
        summary="Answer a question due for review",
        operation_id="review_answer_create",
    )
    def post(self, request):
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        question = selectors.question_get_for_user(user=request.user, question_id=given.validated_data["question"])
        choice = Choice.objects.filter(pk=given.validated_data["choice"]).first()
        if choice is None:
            raise exceptions.ValidationError({"choice": ["No such choice."]})
        try:
            result = review.review_answer(user=request.user, question=question, choice=choice)
        except review.ReviewAnswerInvalidError as invalid:
            raise ReviewAnswerRejectedError(str(invalid)) from invalid
        except review.ReviewNotDueError as not_due:
            raise ReviewNotDueApiError(str(not_due)) from not_due
        code = status.HTTP_201_CREATED if result.recorded else status.HTTP_200_OK
        return Response(self.OutputSerializer(result).data, status=code)

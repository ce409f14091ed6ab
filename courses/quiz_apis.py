"""The quiz API: the same quiz as the chapter page, one thin view per operation.

The current question never reveals which choice is right; the review, with every right answer,
comes once the quiz is finished.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from courses import selectors
from courses.apis import INVITE_REQUIRED_RESPONSE
from courses.models import Choice
from courses.services.quizzes import QuizAnswerInvalidError, quiz_answer


class QuizAnswerRejectedError(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "answer_rejected"


class _ChoiceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()


class _ExplainedChoiceSerializer(_ChoiceSerializer):
    explanation = serializers.CharField()


class _QuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField()
    kind = serializers.CharField(help_text="The question's type (courses/rules.py), e.g. single-choice.")
    prompt = serializers.CharField()
    choices = _ChoiceSerializer(
        many=True, help_text="In the order this learner sees them: shuffled, the same each time."
    )


class _ReviewSerializer(serializers.Serializer):
    question = serializers.IntegerField(source="question.id")
    prompt = serializers.CharField(source="question.prompt")
    right_choice = _ExplainedChoiceSerializer(allow_null=True, help_text="Null for a type with no one right answer.")
    first_choice = serializers.IntegerField(source="first_choice.id", allow_null=True, default=None)
    tries = serializers.IntegerField(help_text="Answers given until the right one.")
    right_at_first_try = serializers.BooleanField()


class QuizStateApi(APIView):
    class OutputSerializer(serializers.Serializer):
        chapter = serializers.IntegerField(source="chapter_id")
        total = serializers.IntegerField(help_text="n in 'Question k of n'.")
        number = serializers.IntegerField(help_text="k in 'Question k of n': the current question's place.")
        finished = serializers.BooleanField()
        score = serializers.IntegerField(help_text="Questions answered right at the first try so far.")
        current = _QuestionSerializer(allow_null=True, help_text="The question to answer now; null when finished.")
        wrong_choice = _ExplainedChoiceSerializer(
            allow_null=True, help_text="The learner's latest answer to the current question, when it was wrong."
        )
        review = _ReviewSerializer(many=True, help_text="Every question with its right answer, once finished.")

    @extend_schema(
        responses={
            200: OutputSerializer,
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such chapter for this user."),
        },
        summary="A chapter's quiz as the learner stands in it",
    )
    def get(self, request, chapter_id: int):
        chapter = selectors.chapter_get_by_id_for_user(user=request.user, chapter_id=chapter_id)
        state = selectors.quiz_state_for_learner(user=request.user, chapter=chapter)
        data = {
            "chapter_id": chapter.pk,
            "total": state.total,
            "number": state.number,
            "finished": state.finished,
            "score": state.score,
            "current": (
                {
                    **{f: getattr(state.current, f) for f in ("id", "position", "kind", "prompt")},
                    "choices": state.current_choices,
                }
                if state.current is not None
                else None
            ),
            "wrong_choice": state.wrong_choice,
            "review": state.review,
        }
        return Response(self.OutputSerializer(data).data)


class QuizAnswerCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        question = serializers.IntegerField(help_text="The current question's id.")
        choice = serializers.IntegerField(help_text="One of that question's choices.")

    class OutputSerializer(serializers.Serializer):
        question = serializers.IntegerField(source="question.id")
        choice = serializers.IntegerField(source="choice.id")
        is_correct = serializers.BooleanField()
        attempt = serializers.IntegerField(help_text="1 for the first try at this question.")
        recorded = serializers.BooleanField(help_text="False when this repeated an answer already stored.")
        explanation = serializers.CharField()
        quiz_finished = serializers.BooleanField()
        score = serializers.IntegerField(allow_null=True, help_text="Right at the first try, once finished.")

    @extend_schema(
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            200: OpenApiResponse(OutputSerializer, description="A repeated answer: nothing new was stored."),
            400: OpenApiResponse(description="A choice of another question, or a question out of turn."),
            403: INVITE_REQUIRED_RESPONSE,
            404: OpenApiResponse(description="No such question for this user."),
        },
        summary="Answer the current quiz question",
    )
    def post(self, request):
        given = self.InputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        question = selectors.question_get_for_user(user=request.user, question_id=given.validated_data["question"])
        choice = Choice.objects.filter(pk=given.validated_data["choice"]).first()
        if choice is None:
            raise exceptions.ValidationError({"choice": ["No such choice."]})
        try:
            result = quiz_answer(user=request.user, question=question, choice=choice)
        except QuizAnswerInvalidError as invalid:
            raise QuizAnswerRejectedError(str(invalid)) from invalid
        code = status.HTTP_201_CREATED if result.recorded else status.HTTP_200_OK
        return Response(self.OutputSerializer(result).data, status=code)


# A choice as a learner sees it before answering, and with its explanation after: shared with the
# review API (courses/review_apis.py), so the schema has one component for each.
ChoiceSerializer = _ChoiceSerializer
ExplainedChoiceSerializer = _ExplainedChoiceSerializer

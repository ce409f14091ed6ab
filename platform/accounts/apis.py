"""POST /api/auth/token/ (DESIGN.md, "Public API contract"): {"username", "password"} -> {"token"}.

Passwords are checked with the HTTP request itself, so the failed-login lockout (accounts.lockout)
counts API guesses with the login page's and the admin's; a locked-out client gets 429.
"""

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.services import api_token_issue


class TokenObtainApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField()
        password = serializers.CharField(trim_whitespace=False, style={"input_type": "password"})

    @extend_schema(
        request=InputSerializer,
        responses={
            200: inline_serializer("TokenObtainOutput", {"token": serializers.CharField()}),
            400: OpenApiResponse(description="Wrong username or password."),
            429: OpenApiResponse(description="Too many failed attempts; see Retry-After."),
        },
        summary="Get an API token",
        description="The user's token, valid for API_TOKEN_TTL_DAYS days from when it was issued; once it has "
        "expired (401) this issues a fresh one.",
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # The Django request, not DRF's wrapper: the lockout marks it, and its middleware answers.
        user = authenticate(request._request, **data.validated_data)
        if user is None:
            raise exceptions.ValidationError({"detail": "Unable to log in with the username and password given."})
        return Response({"token": api_token_issue(user=user).key})

"""API tokens that expire: a token older than API_TOKEN_TTL_DAYS answers 401, and
POST /api/auth/token/ then issues a fresh one (accounts.services.api_token_issue)."""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.services import api_token_is_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if api_token_is_expired(token=token):
            raise exceptions.AuthenticationFailed("The API token has expired; ask POST /api/auth/token/ for a new one.")
        return user, token

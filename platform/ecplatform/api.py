"""API-wide pieces: every error answers JSON with a `detail` that says why; a learner's code in a
request, read the same way at every door."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import exceptions, serializers, status
from rest_framework.validators import ProhibitSurrogateCharactersValidator
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is not None and not isinstance(response.data, dict):
        response.data = {"detail": response.data}
    return response


class AutoSchema(SpectacularAutoSchema):
    """Names each API view's nested InputSerializer/OutputSerializer after the view
    (RunCreateApi.InputSerializer -> RunCreateInput), so the schema's components never clash."""

    def get_serializer_name(self, serializer, direction):
        name = super().get_serializer_name(serializer, direction)
        cls = serializer if isinstance(serializer, type) else type(serializer)
        outer, _, inner = cls.__qualname__.rpartition(".")
        if outer and "." not in outer and name == inner:
            return outer.removesuffix("Api") + name
        return name


class PayloadTooLargeError(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


def request_code_data(request):
    """`request.data` of a request that carries a learner's code: a body over Django's request
    limit answers 413 in JSON (Django's own answer would be an HTML 400)."""
    try:
        return request.data
    except RequestDataTooBig as exc:
        limit = settings.RUNNER_MAX_CODE_BYTES
        raise PayloadTooLargeError(f"The request is far over the code limit of {limit} bytes.") from exc


class CodeField(serializers.CharField):
    """A learner's code. It is checked where it is used (ecplatform.code, the same rule and words at
    every door), so DRF's own NUL and surrogate checks, in other words, are left out here."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", f"Python source, at most {settings.RUNNER_MAX_CODE_BYTES} bytes of UTF-8.")
        super().__init__(allow_blank=True, trim_whitespace=False, **kwargs)
        drf_own = (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator)
        self.validators = [v for v in self.validators if not isinstance(v, drf_own)]

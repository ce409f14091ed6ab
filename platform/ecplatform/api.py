"""API-wide pieces: every error answers JSON with a `detail` that says why."""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
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

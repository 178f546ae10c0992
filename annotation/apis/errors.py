"""The one exception handler of the API: domain errors become HTTP answers."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError


class ErrorSerializer(serializers.Serializer):
    """The body of every error answer (documented once in OpenAPI): what ``exception_handler`` writes."""

    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="the offending field, e.g. elements[1].bounds")


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        code: int = status.HTTP_400_BAD_REQUEST
        if isinstance(exc, ConflictError):
            code = status.HTTP_409_CONFLICT
        elif isinstance(exc, NotFoundError):
            code = status.HTTP_404_NOT_FOUND
        elif isinstance(exc, PermissionDeniedError):
            code = status.HTTP_403_FORBIDDEN
        body: dict[str, Any] = {"detail": exc.message}
        if exc.field:
            body["field"] = exc.field
            body[exc.field] = [exc.message]
        body.update(exc.extra)
        return Response(body, status=code)
    return drf_exception_handler(exc, context)

"""The one exception handler of the API: domain errors become HTTP answers.

Every error answer under ``/api/`` has the one shape ``ErrorSerializer`` documents: ``detail``
always, ``field`` when one input is at fault. The same module documents those answers in the
schema (``document_errors``, a drf-spectacular hook), and answers in JSON under ``/api/`` what
Django itself answers: unknown URLs (``page_not_found``), unhandled exceptions (``server_error``:
500, or 503 when a service is out) and requests it cannot read (``bad_request``: 400, or 413 on
every route for a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``).
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.exceptions import ApplicationError, ConflictError, GoneError, NotFoundError, PermissionDeniedError
from annotation.outages import RETRY_AFTER_SECONDS, service_down

API_PREFIX = "/api/"


class ErrorSerializer(serializers.Serializer):
    """The body of every error answer (documented once in OpenAPI): what ``exception_handler`` writes."""

    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="the offending field, e.g. elements[1].bounds")
    rows = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="a request of many rows (a CSV): every bad row, as {line, value, message}; none was applied",
    )


def _first_error(data: Any, path: str = "") -> tuple[str, str]:
    """The first message of a DRF validation error and the path of its field (``""`` for none):
    ``{"elements": [{}, {"bounds": ["..."]}]}`` -> ``("elements[1].bounds", "...")``."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "non_field_errors":
                return _first_error(value, path)
            if isinstance(key, int) or str(key).isdigit():  # a list's errors keyed by index
                inner = f"{path}[{key}]"
            else:
                inner = f"{path}.{key}" if path else str(key)
            found = _first_error(value, inner)
            if found[1]:
                return found
        return path, ""
    if isinstance(data, list):
        for index, value in enumerate(data):
            # a list of messages belongs to the field itself; a list of objects has an index
            found = _first_error(value, path if not isinstance(value, dict | list) else f"{path}[{index}]")
            if found[1]:
                return found
        return path, ""
    return path, str(data)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        code: int = status.HTTP_400_BAD_REQUEST
        if isinstance(exc, ConflictError):
            code = status.HTTP_409_CONFLICT
        elif isinstance(exc, NotFoundError):
            code = status.HTTP_404_NOT_FOUND
        elif isinstance(exc, PermissionDeniedError):
            code = status.HTTP_403_FORBIDDEN
        elif isinstance(exc, GoneError):
            code = status.HTTP_410_GONE
        body: dict[str, Any] = {"detail": exc.message}
        if exc.field:
            body["field"] = exc.field
            body[exc.field] = [exc.message]
        body.update(exc.extra)
        return Response(body, status=code)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        # DRF's serializer errors ({"<field>": ["message"]}) keep their shape and gain the one
        # every error has: ``detail`` (the first message) and ``field`` (its field).
        field, message = _first_error(response.data)
        data = response.data if isinstance(response.data, dict) else {}
        response.data = {"detail": message or "Invalid input.", **({"field": field} if field else {}), **data}
    return response


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: a URL under ``/api/`` that matches no route (``/api/assignments/abc/``)
    is a JSON 404 like any other of the API; pages keep the site's 404 page."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def body_too_large_detail(limit: int) -> str:
    """The ``detail`` of a 413: the app's (``bad_request``) and the proxy's (docker/nginx.conf) say the same."""
    return f"The request body is over the limit of {limit} bytes."


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400``: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``RequestDataTooBig``) is a 413
    with the ``Error`` body on every route, as the proxy answers bodies over its own limits; any
    other unreadable request under ``/api/`` is a JSON 400. Pages keep the site's 400 page.

    The refused body is read and thrown away first (up to the largest body the proxy lets through):
    gunicorn closes the connection after the answer, and closing it on unread bytes resets it, so
    the proxy would answer 502 instead of this 413.
    """
    if isinstance(exception, RequestDataTooBig):
        _discard_body(request)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
        return JsonResponse({"detail": body_too_large_detail(limit)}, status=413)
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Bad request: the request could not be read."}, status=400)
    return defaults.bad_request(request, exception)


def _discard_body(request: HttpRequest) -> None:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if declared > settings.SCREENQA_IMPORT["MAX_UPLOAD_BYTES"] + 1024 * 1024:
        return  # more than the proxy forwards: nobody legitimate, let the connection go
    try:
        while request.read(1 << 16):
            pass
    except OSError:
        pass  # the client is gone: nothing to answer anyway


SERVER_ERROR = "Server error: it is logged for the administrators."
UNAVAILABLE = "The service is unavailable for a moment: try again shortly."


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: an unhandled exception under ``/api/`` answers the ``Error`` body, never a
    page or a traceback: 503 with ``Retry-After`` when a service the request needed is out
    (``annotation.outages``: the same request may work in a moment), else 500. Pages keep the
    site's 500 page. Django has logged the exception with its traceback before calling this."""
    if not request.path.startswith(API_PREFIX):
        return defaults.server_error(request)
    if service_down(sys.exc_info()[1]):
        return JsonResponse({"detail": UNAVAILABLE}, status=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    return JsonResponse({"detail": SERVER_ERROR}, status=500)


# --- the schema: every operation documents the errors every operation can give ---------------

_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_ALWAYS = {
    "403": "not logged in, or not allowed (e.g. an annotator calling a lead's endpoint)",
    "404": "no such object, or one of a project the caller is not a member of",
    "429": "throttled: too many requests; `Retry-After` says when to try again",
}
_WITH_INPUT = {"400": "invalid input; `field` names it"}
_WITH_BODY = {"413": "the body is over the size limit (docs/operations.md, upload and body limits)"}


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: add the error answers an operation does not declare
    itself (403, 404 and 429 everywhere; 400 where it takes a body or query parameters; 413 where it
    takes a body), and give
    every 4xx answer the ``Error`` body. Declared ones keep their own description."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    if "Error" not in schemas:  # ErrorSerializer's component, when no view declared it
        schemas["Error"] = {
            "type": "object",
            "properties": {"detail": {"type": "string"}, "field": {"type": "string"}},
            "required": ["detail"],
        }
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            wanted = dict(_ALWAYS)
            if "requestBody" in operation or any(p.get("in") == "query" for p in operation.get("parameters", [])):
                wanted.update(_WITH_INPUT)
            if "requestBody" in operation:
                wanted.update(_WITH_BODY)
            for code, description in wanted.items():
                responses.setdefault(code, {"description": description})
            for code, response in responses.items():
                if code.startswith("4"):  # every error answer has the one error body
                    response.setdefault("content", {"application/json": {"schema": _ERROR_REF}})
    return result

"""Import API: leads start a RICO import from the web. The job is followed and re-run through the
job API (``pipeline.apis.jobs``: ``/api/imports/<id>/``, ``/api/imports/<id>/retry/``).

Who may use it: leads of the project and site admins. Annotators of the project get
403, users who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.apis.jobs import JobOutputSerializer
from pipeline.ingest.jobs import import_job_create, import_request_size_check
from pipeline.stages.wire import StrictSerializer

ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="bad input (the body says which field)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project, or not a member"),
}


DEVICE_SIZE_HELP = 'the VH device space, e.g. "1440x2560" (default: the project\'s)'


@extend_schema_serializer(component_name="ImportUpload")
class ImportUploadSerializer(StrictSerializer):
    """``multipart/form-data``: upload a zip."""

    file = serializers.FileField(help_text="a zip of <id>.jpg|png + <id>.json pairs (flat, or RICO's trace layout)")
    device_size = serializers.CharField(required=False, allow_blank=True, help_text=DEVICE_SIZE_HELP)


@extend_schema_serializer(component_name="ImportPrefix")
class ImportPrefixSerializer(StrictSerializer):
    """``application/json``: import a folder already in the project's import area."""

    prefix = serializers.CharField(
        help_text="a folder in the project's import area staging/<slug>/ of the storage, e.g. batch-1 (no ..)"
    )
    device_size = serializers.CharField(required=False, allow_blank=True, help_text=DEVICE_SIZE_HELP)


class OptionalBodySchema(AutoSchema):
    """The body is documented as optional. openapi-python-client (0.29) writes ``body: ... | Unset``
    without importing ``Unset`` for a *required* body with two media types, so the generated
    ``import_create`` did not even import (upstream issue #1451). A request without a body is a
    documented 400 naming ``file``, so a client loses nothing."""

    def _get_request_body(self, direction: str = "request") -> Any:
        body = super()._get_request_body(direction)
        if body:
            body.pop("required", None)
        return body


class ImportJobCreateApi(APIView):
    """``POST /api/projects/<slug>/imports/``: start an import (202 with the job).

    Leads of the project and site admins only. The body is read by the serializer of its media
    type, which is also its schema: multipart ``ImportUpload`` (``file``, a zip of
    ``<id>.jpg|png`` + ``<id>.json`` pairs) or JSON ``ImportPrefix`` (``prefix``, a folder in
    storage); both take an optional ``device_size`` ``"WxH"`` (default: the project's). A key the
    body's type does not define (a ``prefix`` beside an upload) is refused by name.
    """

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, JSONParser]
    schema = OptionalBodySchema()

    @extend_schema(
        operation_id="import_create",
        summary="Start an import of screens",
        request={
            "multipart/form-data": ImportUploadSerializer,
            "application/json": ImportPrefixSerializer,
        },
        responses={202: JobOutputSerializer, **ERRORS},
        tags=["imports"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        import_request_size_check(content_length=request.META.get("CONTENT_LENGTH"))
        is_json = (request.content_type or "").startswith("application/json")
        serializer = (ImportPrefixSerializer if is_json else ImportUploadSerializer)(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = import_job_create(
            project=project,
            user=request.user,
            upload=data.get("file"),
            prefix=data.get("prefix"),
            device_size=data.get("device_size"),
        )
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)

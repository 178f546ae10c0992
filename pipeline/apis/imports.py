"""Import API: leads start a RICO import from the web. The job is followed and re-run through the
job API (``pipeline.apis.jobs``: ``/api/imports/<id>/``, ``/api/imports/<id>/retry/``).

Who may use it: leads of the project and site admins. Annotators of the project get
403, users who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.apis.jobs import JobOutputSerializer
from pipeline.ingest.jobs import import_job_create, import_request_size_check

ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="bad input (the body says which field)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project, or not a member"),
}


class ImportJobCreateApi(APIView):
    """``POST /api/projects/<slug>/imports/``: start an import (202 with the job).

    Leads of the project and site admins only. Body: multipart ``file`` (a zip of
    ``<id>.jpg|png`` + ``<id>.json`` pairs), or JSON ``{"prefix": "..."}`` naming a
    folder in storage; optional ``device_size`` ``"WxH"`` (default: the project's).
    """

    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(required=False, help_text="a zip of screenshots and VH JSON files")
        prefix = serializers.CharField(
            required=False,
            allow_blank=True,
            help_text="a folder in the project's import area staging/<slug>/ of the storage, e.g. batch-1 (no ..)",
        )
        device_size = serializers.CharField(required=False, allow_blank=True, help_text='e.g. "1440x2560"')

    @extend_schema(
        operation_id="import_create",
        summary="Start an import of screens",
        request={
            "multipart/form-data": InputSerializer,
            "application/json": InputSerializer,
        },
        responses={202: JobOutputSerializer, **ERRORS},
        tags=["imports"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        import_request_size_check(content_length=request.META.get("CONTENT_LENGTH"))
        serializer = self.InputSerializer(data=request.data)
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

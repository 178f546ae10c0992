"""Export API: leads start an export job and download its zip.

Who may use it: leads of the project and site admins. Annotators of the project get 403,
users who are not members 404, anonymous callers 403. The job's status is read, and a failed or
stale export run again, through the job API (``pipeline.apis.jobs``: ``/api/release-jobs/<id>/``).
"""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.apis.jobs import JobOutputSerializer
from pipeline.release.export.jobs import release_export_download_get, release_export_jobs, release_export_start
from pipeline.release.export.writers import EXPORT_FORMATS


class ExportListStartApi(APIView):
    """``GET``: the project's past exports, newest first. ``POST``: start an export (202).

    Leads of the project and site admins only.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="ExportStartInput")
    class InputSerializer(serializers.Serializer):
        format = serializers.ChoiceField(
            choices=[(key, fmt.label) for key, fmt in EXPORT_FORMATS.items()], default="screenqa"
        )

    @extend_schema(responses={200: JobOutputSerializer(many=True)})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(JobOutputSerializer(release_export_jobs(project=project), many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={202: JobOutputSerializer, 400: OpenApiResponse(ErrorSerializer, description="unknown format")},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = release_export_start(project=project, user=request.user, fmt=data.validated_data["format"])
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ExportDownloadApi(APIView):
    """The zip of a finished export (streamed from the storage backend). Leads of its project only;
    409 while the export is not done."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="the release zip"),
            409: OpenApiResponse(
                ErrorSerializer, description="the export has not finished (`status` says where it is)"
            ),
        }
    )
    def get(self, request: Request, job_id: int) -> FileResponse:
        job = release_export_download_get(user=request.user, job_id=job_id)
        name = (job.artifact.name or "export.zip").rsplit("/", 1)[-1]
        return FileResponse(job.artifact.open("rb"), as_attachment=True, filename=name, content_type="application/zip")

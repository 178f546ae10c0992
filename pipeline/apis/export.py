"""Export API: leads start an export job and download its zip.

Who may use it: leads of the project and site admins. Annotators of the project get 403,
users who are not members 404, anonymous callers 403. The job's status is read through
``GET /api/release-jobs/<id>/`` (the release-jobs API).
"""

from __future__ import annotations

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import ReleaseJob
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.release.export.jobs import release_export_download_get, release_export_jobs, release_export_start
from pipeline.release.export.service import FORMATS


class ExportJobOutputSerializer(serializers.ModelSerializer):
    status_url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ReleaseJob
        fields = [
            "id",
            "format",
            "status",
            "processed",
            "total",
            "error",
            "status_url",
            "download_url",
            "created_at",
            "finished_at",
        ]

    def get_status_url(self, job: ReleaseJob) -> str:
        # The release-jobs status API belongs to post-processing; every kind of release job is read there.
        return reverse("api-release-job-detail", kwargs={"job_id": job.pk})

    def get_download_url(self, job: ReleaseJob) -> str | None:
        if job.status != ReleaseJob.Status.DONE:
            return None
        return reverse("api-release-job-download", kwargs={"job_id": job.pk})


class ExportListStartApi(APIView):
    """``GET``: the project's past exports, newest first. ``POST``: start an export (202).

    Leads of the project and site admins only.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema_serializer(component_name="ExportStartInput")
    class InputSerializer(serializers.Serializer):
        format = serializers.ChoiceField(choices=FORMATS, default="screenqa")

    @extend_schema(responses={200: ExportJobOutputSerializer(many=True)})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(ExportJobOutputSerializer(release_export_jobs(project=project), many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={202: ExportJobOutputSerializer, 400: OpenApiResponse(description="unknown format")},
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = release_export_start(project=project, user=request.user, fmt=data.validated_data["format"])
        return Response(ExportJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ExportDownloadApi(APIView):
    """The zip of a finished export (streamed from the storage backend). Leads of its project only;
    409 while the export is not done."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={(200, "application/zip"): OpenApiResponse(description="the release zip")})
    def get(self, request: Request, job_id: int) -> FileResponse:
        job = release_export_download_get(user=request.user, job_id=job_id)
        name = (job.artifact.name or "export.zip").rsplit("/", 1)[-1]
        return FileResponse(job.artifact.open("rb"), as_attachment=True, filename=name, content_type="application/zip")

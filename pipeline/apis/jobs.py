"""Job API: one shape for every kind of job, one status endpoint and one re-run endpoint per table.

* ``GET /api/imports/<id>/``, ``GET /api/release-jobs/<id>/``, ``GET /api/member-jobs/<id>/``: a job's
  status, progress and result;
* ``POST .../<id>/retry/`` on each: run a failed or stale job again.

Who may use them: leads of the job's project and site admins. Annotators of the project get 403, users
who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.models import ImportJob, Job, JobStatus, MemberJob, ReleaseJob
from annotation.permissions import IsAuthenticated
from pipeline.jobs.lifecycle import job_get_for_lead, job_is_stale, job_rerun
from pipeline.release.export.service import FORMATS

# The URL names of each table's endpoints.
ROUTES: dict[type[Job], dict[str, str]] = {
    ImportJob: {"detail": "api-import-detail", "rerun": "api-import-retry"},
    ReleaseJob: {"detail": "api-release-job-detail", "rerun": "api-release-job-retry"},
    MemberJob: {"detail": "api-member-job-detail", "rerun": "api-member-job-retry"},
}


@extend_schema_field(OpenApiTypes.STR)
class _DownloadUrlField(serializers.Field):
    """The artifact's download endpoint (exports), once there is one; else null."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", required=False, allow_null=True, **kwargs)

    def to_representation(self, job: Job) -> str | None:
        # Served by the export area's download endpoint (leads only, like this one).
        if not getattr(job, "artifact", None):  # release jobs; named by the row once the export is done
            return None
        try:
            return reverse("api-release-job-download", kwargs={"job_id": job.pk})
        except NoReverseMatch:  # the export area is not wired in
            return None


@extend_schema_field(OpenApiTypes.STR)
class _CredentialsUrlField(serializers.Field):
    """A bulk account creation's one credentials download (member jobs only)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", required=False, **kwargs)

    def to_representation(self, job: Job) -> str:
        return reverse("api-member-job-credentials", kwargs={"job_id": job.pk})


class JobOutputSerializer(serializers.Serializer):
    """Any job. The fields of one table only (import jobs: ``source_kind`` … ``summary``; release jobs:
    ``format``, ``download_url``) are left out of the other table's jobs."""

    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="import, postprocess, short-answers, export or members")
    url = serializers.SerializerMethodField(help_text="this job's status endpoint")
    status_url = serializers.SerializerMethodField(help_text="the same as url")
    rerun_url = serializers.SerializerMethodField(help_text="POST here to run a failed or stale job again")
    project = serializers.CharField(source="project.slug", help_text="the project's slug")
    created_by = serializers.CharField(source="created_by.username", allow_null=True, help_text="who started it")
    status = serializers.ChoiceField(choices=JobStatus.choices)
    stale = serializers.SerializerMethodField(
        help_text="queued or running without a sign of life for SCREENQA_JOB_STALE_SECONDS: its worker is gone"
    )
    processed = serializers.IntegerField()
    total = serializers.IntegerField()
    result = serializers.DictField(help_text="what the work returned, once done")
    error = serializers.CharField(help_text="why the last run failed")
    attempts = serializers.IntegerField(help_text="runs claimed so far")
    heartbeat_at = serializers.DateTimeField(help_text="last sign of life")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    # import jobs
    source_kind = serializers.CharField(required=False, help_text="imports: zip or prefix")
    # (DRF takes declared fields off the class, so this one does not shadow ``Field.source``.)
    source = serializers.CharField(  # type: ignore[assignment]
        required=False, help_text="imports: stored zip name or storage prefix"
    )
    device_width = serializers.IntegerField(required=False, allow_null=True)
    device_height = serializers.IntegerField(required=False, allow_null=True)
    summary = serializers.DictField(
        source="result",
        required=False,
        help_text="imports: the importer's summary (imported, already present, rejected with reasons)",
    )
    # release jobs
    format = serializers.CharField(required=False, help_text=f"exports: {', '.join(FORMATS)}")
    download_url = _DownloadUrlField()
    # member jobs
    downloaded_at = serializers.DateTimeField(
        required=False, allow_null=True, help_text="members: when the credentials were downloaded (once)"
    )
    credentials_url = _CredentialsUrlField(
        help_text="members: POST here once the job is done for the new accounts' credentials (once)"
    )

    TABLE_FIELDS: ClassVar[dict[type[Job], tuple[str, ...]]] = {
        ImportJob: ("source_kind", "source", "device_width", "device_height", "summary"),
        ReleaseJob: ("format", "download_url"),
        MemberJob: ("downloaded_at", "credentials_url"),
    }

    def to_representation(self, job: Job) -> dict[str, Any]:
        data = super().to_representation(job)
        for model, names in self.TABLE_FIELDS.items():
            if not isinstance(job, model):
                for name in names:
                    data.pop(name, None)
        return data

    def get_url(self, job: Job) -> str:
        return reverse(ROUTES[type(job)]["detail"], kwargs={"job_id": job.pk})

    def get_status_url(self, job: Job) -> str:
        return self.get_url(job)

    def get_rerun_url(self, job: Job) -> str:
        return reverse(ROUTES[type(job)]["rerun"], kwargs={"job_id": job.pk})

    def get_stale(self, job: Job) -> bool:
        return job_is_stale(job=job)


ERRORS: dict[int, Any] = {
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the job's project"),
    404: OpenApiResponse(ErrorSerializer, description="no such job, or not a member of its project"),
    409: OpenApiResponse(ErrorSerializer, description="done, or its worker is still alive"),
}


class JobDetailApi(APIView):
    """``GET``: a job's status, progress and result. Leads of the job's project and site admins only."""

    permission_classes = [IsAuthenticated]
    model: type[Job]  # set by each route's subclass

    def get(self, request: Request, job_id: int) -> Response:
        job = job_get_for_lead(model=self.model, user=request.user, job_id=job_id)
        return Response(JobOutputSerializer(job).data)


class JobRerunApi(APIView):
    """``POST``: queue a failed or stale job again (202 with the job). Leads of the job's project and site
    admins only; 409 when the job is done or its worker is alive (``pipeline.jobs.lifecycle.job_rerun``)."""

    permission_classes = [IsAuthenticated]
    model: type[Job]  # set by each route's subclass

    def post(self, request: Request, job_id: int) -> Response:
        job = job_rerun(model=self.model, user=request.user, job_id=job_id)
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _detail(operation_id: str, summary: str, tag: str) -> Any:
    return extend_schema_view(
        get=extend_schema(
            operation_id=operation_id,
            summary=summary,
            responses={200: JobOutputSerializer, 403: ERRORS[403], 404: ERRORS[404]},
            tags=[tag],
        )
    )


def _rerun(operation_id: str, summary: str, tag: str) -> Any:
    return extend_schema_view(
        post=extend_schema(
            operation_id=operation_id,
            summary=summary,
            request=None,
            responses={202: JobOutputSerializer, **ERRORS},
            tags=[tag],
        )
    )


@_detail("import_retrieve", "An import job's status, progress and summary", "imports")
class ImportJobDetailApi(JobDetailApi):
    """``GET /api/imports/<id>/``."""

    model = ImportJob


@_rerun("import_retry", "Run a failed or stale import again", "imports")
class ImportJobRetryApi(JobRerunApi):
    """``POST /api/imports/<id>/retry/``."""

    model = ImportJob


@_detail("release_job_retrieve", "A release job's status, progress and result", "release")
class ReleaseJobDetailApi(JobDetailApi):
    """``GET /api/release-jobs/<id>/``: post-processing, short answers and exports."""

    model = ReleaseJob


@_rerun("release_job_retry", "Run a failed or stale release job again", "release")
class ReleaseJobRetryApi(JobRerunApi):
    """``POST /api/release-jobs/<id>/retry/``."""

    model = ReleaseJob


@_detail("member_job_retrieve", "A bulk account creation's status and progress", "members")
class MemberJobDetailApi(JobDetailApi):
    """``GET /api/member-jobs/<id>/``."""

    model = MemberJob


@_rerun("member_job_retry", "Run a failed or stale bulk account creation again", "members")
class MemberJobRetryApi(JobRerunApi):
    """``POST /api/member-jobs/<id>/retry/``."""

    model = MemberJob

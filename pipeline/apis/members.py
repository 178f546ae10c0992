"""Bulk member API: leads create many project accounts at once, as a background job, and download their
credentials once.

* ``POST /api/projects/<slug>/members/bulk/``: a CSV of names (``csv``) or a ``count``; every row is
  checked first, so one bad row refuses them all (400, ``rows`` names each); else 202 with the job;
* ``GET /api/member-jobs/<id>/``, ``POST /api/member-jobs/<id>/retry/``: the job API (``pipeline.apis.jobs``);
* ``POST /api/member-jobs/<id>/credentials/``: the new accounts' usernames, passwords and tokens as CSV,
  once (409 until the job is done, 410 after the first download).

Who may use them: leads of the project (the job's project) and site admins. Annotators and reviewers of the
project get 403, users who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.models import MemberJob, Role
from annotation.permissions import IsAuthenticated, project_get_for_lead
from annotation.services.members import BULK_MAX_ROWS, member_job_credentials_take
from pipeline.apis.jobs import JobOutputSerializer
from pipeline.jobs.lifecycle import job_get_for_lead
from pipeline.members import members_bulk_start

TAGS = ["members"]


class MembersBulkApi(APIView):
    """Create project accounts in bulk (a background job: one password hash per account)."""

    permission_classes = [IsAuthenticated]

    class BulkInSerializer(serializers.Serializer):
        csv = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            trim_whitespace=False,
            help_text="one per line: name, email, or name,email (a header line is skipped)",
        )
        count = serializers.IntegerField(
            required=False, allow_null=True, default=None, min_value=1, max_value=BULK_MAX_ROWS, help_text="…or N"
        )
        role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)
        in_answer_pool = serializers.BooleanField(default=False)

    @extend_schema(
        tags=TAGS,
        request=BulkInSerializer,
        responses={
            202: JobOutputSerializer,
            400: OpenApiResponse(ErrorSerializer, description="bad input; `rows` names every bad row"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        serializer = self.BulkInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(serializer.validated_data)
        job = members_bulk_start(
            project=project,
            user=request.user,
            role=data["role"],
            in_answer_pool=data["in_answer_pool"],
            csv_text=data["csv"],
            count=data["count"],
        )
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class MemberJobCredentialsApi(APIView):
    """The credentials of a finished bulk creation, as CSV, once: they are deleted as they are sent."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=TAGS,
        request=None,
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="username,password,token,role,in_answer_pool; one row per new account"
            ),
            409: OpenApiResponse(ErrorSerializer, description="the job has not finished"),
            410: OpenApiResponse(ErrorSerializer, description="downloaded already (credentials are shown once)"),
        },
    )
    def post(self, request: Request, job_id: int) -> HttpResponse:
        job = job_get_for_lead(model=MemberJob, user=request.user, job_id=job_id)
        return credentials_response(job)


def credentials_response(job: MemberJob) -> HttpResponse:
    """The one download of ``job``'s credentials (API and page alike): a CSV attachment nobody caches."""
    text = member_job_credentials_take(job=job)
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{job.project.slug}-accounts-{job.pk}.csv"'
    response["Cache-Control"] = "no-store"
    return response

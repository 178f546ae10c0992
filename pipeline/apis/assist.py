"""Model assistance API for leads (docs/assist.md): the backend's figures (error rate, latency, what
is cached) and per annotator what they do with suggestions; and "compute suggestions now".

Who may use it: leads of the project and site admins. Other members get 403, users who are not members
404, anonymous callers 403.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.assist.report import assist_annotator_figures, assist_backend_figures
from pipeline.assist.service import assist_refill_for_lead

ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="the project has no backend (assist_url)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project, or not a member"),
}


class ModelAgreementSerializer(serializers.Serializer):
    questions = serializers.IntegerField(help_text="questions with a suggestion and a kept answer with a candidate")
    agree = serializers.IntegerField(help_text="...whose first-ranked suggestion is among the crowd's elements")
    share = serializers.FloatField(allow_null=True)


class BackendFiguresSerializer(serializers.Serializer):
    configured = serializers.BooleanField()
    url = serializers.CharField(allow_blank=True)
    calls = serializers.IntegerField()
    failures = serializers.IntegerField()
    error_rate = serializers.FloatField(allow_null=True, help_text="failures / calls")
    suggested = serializers.IntegerField(help_text="items with a cached suggestion")
    failing = serializers.IntegerField(help_text="items whose last call failed (served without a suggestion)")
    mean_latency_ms = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)
    job_running = serializers.BooleanField()
    crowd_agreement = ModelAgreementSerializer(help_text="the model against the crowd's kept answers")


class AnnotatorAssistSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    submissions = serializers.IntegerField()
    shown = serializers.IntegerField(help_text="submissions with a suggestion shown")
    accepted = serializers.IntegerField(help_text="...accepted unchanged")
    edited = serializers.IntegerField()
    acceptance_rate = serializers.FloatField(allow_null=True)
    wrong_met = serializers.IntegerField(help_text="control items whose suggestion was wrong")
    wrong_accepted = serializers.IntegerField(help_text="...where the wrong suggestion was accepted unchanged")
    control_accuracy_when_wrong = serializers.FloatField(allow_null=True)


class AssistReportSerializer(serializers.Serializer):
    backend = BackendFiguresSerializer()
    annotators = AnnotatorAssistSerializer(many=True)


class RefillSerializer(serializers.Serializer):
    queued = serializers.BooleanField(help_text="false: nothing missing, or a job is already running")
    job_id = serializers.IntegerField(allow_null=True)


class AssistReportApi(APIView):
    """``GET /api/projects/<slug>/assist/``: the backend's error rate and the annotators' use of suggestions."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="assist_report",
        summary="Model assistance: the backend's figures and per annotator acceptance",
        responses={200: AssistReportSerializer, **ERRORS},
        tags=["assist"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        body = {
            "backend": assist_backend_figures(project=project),
            "annotators": assist_annotator_figures(project=project),
        }
        return Response(AssistReportSerializer(body).data)


class AssistRefillApi(APIView):
    """``POST /api/projects/<slug>/assist/refill/``: compute the missing suggestions of the queue's next
    questions now (202 with the job when one was queued, 200 when nothing was missing or one runs)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="assist_refill",
        summary="Compute the queue's missing suggestions in the background",
        request=None,
        responses={200: RefillSerializer, 202: RefillSerializer, **ERRORS},
        tags=["assist"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        job = assist_refill_for_lead(project=project, user=request.user)
        body = {"queued": job is not None, "job_id": job.pk if job is not None else None}
        return Response(RefillSerializer(body).data, status=status.HTTP_202_ACCEPTED if job else status.HTTP_200_OK)

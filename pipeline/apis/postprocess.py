"""Post-processing API: leads start post-processing and short answers, and read the decisions.
The jobs are followed and re-run through the job API (``pipeline.apis.jobs``).

Who may use it: leads of the project and site admins. Annotators of the project get 403, users who
are not members 404, anonymous callers 403 (the one exception handler shapes every error).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.apis.params import PageParams, Pagination, choice_param, query_params
from annotation.models import ReleaseJob, Split
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.apis.jobs import JobOutputSerializer
from pipeline.decisions.decide import ANSWER_REASONS, QUESTION_REASONS
from pipeline.decisions.selectors import decision_payload, postprocess_decisions
from pipeline.release.postprocess import release_job_start


class DecisionOutputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["question", "answer"])
    id = serializers.IntegerField()
    question_id = serializers.IntegerField()
    rico_id = serializers.CharField()
    split = serializers.CharField()
    question = serializers.CharField(help_text="the question as written")
    reason = serializers.CharField(help_text="drop reason code (docs/postprocessing.md)")
    reason_label = serializers.CharField()
    agreement = serializers.CharField(required=False, help_text="questions: all / two / none, or empty")
    verdict = serializers.CharField(required=False, help_text="answers: the answerer's verdict")
    annotator = serializers.CharField(required=False, allow_null=True)


class DecisionPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = DecisionOutputSerializer(many=True)


ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="bad input (the body says which field)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project or job, or not a member"),
    409: OpenApiResponse(ErrorSerializer, description="a job of this kind is already queued or running"),
}


class _StartApi(APIView):
    permission_classes = [IsAuthenticated]
    kind: str = ""

    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        job = release_job_start(project=project, kind=self.kind, user=request.user)
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class PostprocessStartApi(_StartApi):
    """``POST /api/projects/<slug>/postprocess/``: queue post-processing (202 with the job). Leads only."""

    kind = ReleaseJob.Kind.POSTPROCESS

    @extend_schema(
        operation_id="postprocess_start",
        summary="Start post-processing of the project's answered questions",
        request=None,
        responses={202: JobOutputSerializer, **ERRORS},
        tags=["release"],
    )
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class ShortAnswersStartApi(_StartApi):
    """``POST /api/projects/<slug>/short-answers/``: queue short answers for kept questions. Leads only."""

    kind = ReleaseJob.Kind.SHORT_ANSWERS

    @extend_schema(
        operation_id="short_answers_start",
        summary="Generate short answers for kept questions that have none",
        request=None,
        responses={202: JobOutputSerializer, **ERRORS},
        tags=["release"],
    )
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class PostprocessDecisionsApi(APIView):
    """``GET /api/projects/<slug>/postprocess/decisions/``: dropped questions or answers with their
    reasons, newest first, paginated. Filters: ``kind`` (question | answer), ``reason``, ``split``.
    Leads only."""

    permission_classes = [IsAuthenticated]

    class DecisionParams(PageParams):
        kind = choice_param(["question", "answer"], default="question")
        reason = choice_param(
            sorted({*QUESTION_REASONS, *ANSWER_REASONS}), required=False, help_text="a reason of the kind"
        )
        split = choice_param(Split.values, required=False)

    @extend_schema(
        operation_id="postprocess_decisions",
        summary="What post-processing dropped, and why",
        parameters=[DecisionParams],
        responses={200: DecisionPageSerializer, 400: ERRORS[400], 403: ERRORS[403], 404: ERRORS[404]},
        tags=["release"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        params = query_params(self.DecisionParams, request)
        decisions = postprocess_decisions(
            project=project, kind=params["kind"], reason=params.get("reason", ""), split=params.get("split", "")
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(decisions, request, view=self)
        rows = [decision_payload(obj) for obj in page or []]
        return paginator.get_paginated_response(DecisionOutputSerializer(rows, many=True).data)

"""REST API of the pipeline engine: stage queues and assignments (a public wire contract).

One class per operation: parse input, call one service, shape output. Every class says
who may call it. Errors come from the one handler (``annotation.apis.errors``):
400 names the offending ``field``, 403/404 for what the caller may not do or see, 409
for lease and state conflicts. Authentication: session (browser, CSRF) or
``Authorization: Token <key>``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.exceptions import ApplicationError
from annotation.models import Verdict
from annotation.permissions import IsAuthenticated, project_get_for_lead, project_get_for_member
from annotation.selectors.assignments import assignment_get_for_user
from pipeline.stages import (
    app_mark_non_english,
    assignment_draft_save,
    assignment_extend,
    assignment_next_by_slug,
    assignment_payload,
    assignment_release,
    assignment_result,
    assignment_skip,
    assignment_submit,
    not_answerable_start,
    project_progress,
    stages_for_user,
)

TAGS = ["engine"]


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ApplicationError("The body must be a JSON object.", field="body")
    return dict(request.data)


# --- wire format (documentation of the public contract) -----------------------------------


class CandidateSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(help_text="pre-order index of the VH node")
    bounds = serializers.ListField(child=serializers.IntegerField(), help_text="[left, top, right, bottom] in pixels")
    text = serializers.CharField(allow_blank=True)
    type = serializers.CharField()
    class_name = serializers.CharField(allow_blank=True)


class ScreenSerializer(serializers.Serializer):
    rico_id = serializers.CharField()
    app = serializers.CharField(help_text="Android package")
    image_url = serializers.CharField()
    overlay_url = serializers.CharField()
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    candidates = CandidateSerializer(many=True)


class QuestionBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()


class NextSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    stage = serializers.CharField(help_text="prefilter, questions-1, questions-2, answers or not-answerable")
    status = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    screen = ScreenSerializer()
    draft = serializers.DictField(help_text="the stored draft ({} when none)")
    previous_questions = QuestionBriefSerializer(
        many=True, required=False, help_text="questions-2 and not-answerable: the screen's questions so far"
    )
    question = QuestionBriefSerializer(required=False, help_text="answers: the question to answer")
    max_questions = serializers.IntegerField(required=False, help_text="question passes: the cap of this pass")


class PrefilterSubmitSerializer(serializers.Serializer):
    non_english_app = serializers.BooleanField()
    vh_out_of_sync = serializers.BooleanField(help_text="VH out of sync with the pixels in the main content")
    note = serializers.CharField(required=False, allow_blank=True)


class QuestionsSubmitSerializer(serializers.Serializer):
    questions = serializers.ListField(
        child=serializers.CharField(), help_text="0..5 (pass 1) or 0..3 (pass 2); [] means nothing to ask"
    )


class NotAnswerableSubmitSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="a plausible question this screen cannot answer")


class AnswerElementSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(required=False, help_text="a candidate (give this or bounds)")
    bounds = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="a drawn box [l, t, r, b] in screenshot pixels"
    )
    text = serializers.CharField(help_text="non-empty; defaults to the candidate's text for a vh_index")


class AnswersSubmitSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="the question as fixed by the answerer")
    verdict = serializers.ChoiceField(choices=Verdict.values)
    elements = AnswerElementSerializer(many=True, required=False, help_text="ordered; non-empty for answered")
    full_answer = serializers.CharField(required=False, allow_blank=True, help_text="required for answered")


SUBMIT_BODY = PolymorphicProxySerializer(
    component_name="SubmitBody",
    serializers=[
        PrefilterSubmitSerializer,
        QuestionsSubmitSerializer,
        NotAnswerableSubmitSerializer,
        AnswersSubmitSerializer,
    ],
    resource_type_field_name=None,
)


class AssignmentResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    stage = serializers.CharField()
    status = serializers.CharField(help_text="leased, submitted, skipped, released or expired")
    lease_expires_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    submission = serializers.DictField(allow_null=True, help_text="the accepted, normalised body")
    skip_reason = serializers.CharField(allow_blank=True)
    draft = serializers.DictField()


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="invalid input; `field` names it"),
    403: OpenApiResponse(ErrorSerializer, description="not allowed (e.g. not in the answer pool, not a lead)"),
    404: OpenApiResponse(ErrorSerializer, description="no such project/stage/assignment visible to the caller"),
    409: OpenApiResponse(ErrorSerializer, description="lease or state conflict"),
}


# --- stages ------------------------------------------------------------------------------


class StageListApi(APIView):
    """Members of the project: the stages they may work on, with counts (home page)."""

    permission_classes = [IsAuthenticated]

    class StageRowSerializer(serializers.Serializer):
        stage = serializers.CharField()
        label = serializers.CharField()  # type: ignore[assignment]
        available = serializers.IntegerField()
        done_today = serializers.IntegerField()
        open_assignment = serializers.IntegerField(allow_null=True)

    @extend_schema(tags=TAGS, responses={200: StageRowSerializer(many=True), 404: ERRORS[404]})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        return Response(stages_for_user(project=project, user=request.user))


class StageNextApi(APIView):
    """Members of the project (``answers``: the answer pool): the caller's open assignment
    of the stage, or a new lease; 204 when nothing is available to the caller."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=TAGS,
        request=None,
        responses={200: NextSerializer, 204: OpenApiResponse(description="nothing available to you"), **ERRORS},
    )
    def post(self, request: Request, slug: str, stage: str) -> Response:
        assignment = assignment_next_by_slug(slug=slug, user=request.user, stage=stage)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(assignment_payload(assignment=assignment))


class NotAnswerableStartApi(APIView):
    """Leads of the project: sample screens for the not-answerable stage."""

    permission_classes = [IsAuthenticated]

    class NotAnswerableStartInSerializer(serializers.Serializer):
        sample_size = serializers.IntegerField(
            required=False, min_value=1, max_value=5000, help_text="default: enough to reach the 10% target"
        )

    class NotAnswerableStartOutSerializer(serializers.Serializer):
        sampled = serializers.IntegerField()
        requested = serializers.IntegerField()
        available = serializers.IntegerField()
        questions = serializers.IntegerField()
        not_answerable_questions = serializers.IntegerField()
        pending = serializers.IntegerField()
        default = serializers.IntegerField()

    @extend_schema(
        tags=TAGS, request=NotAnswerableStartInSerializer, responses={200: NotAnswerableStartOutSerializer, **ERRORS}
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        body = _body(request)
        return Response(not_answerable_start(project=project, sample_size=body.get("sample_size")))


class AppNonEnglishApi(APIView):
    """Leads of the project: mark a whole app non-English (its screens waiting for
    pre-filtering are excluded; screens further along are reported, not changed)."""

    permission_classes = [IsAuthenticated]

    class AppNonEnglishOutSerializer(serializers.Serializer):
        app = serializers.CharField()
        non_english = serializers.BooleanField()
        excluded = serializers.IntegerField()
        further_along = serializers.DictField(child=serializers.IntegerField())

    @extend_schema(tags=TAGS, request=None, responses={200: AppNonEnglishOutSerializer, **ERRORS})
    def post(self, request: Request, slug: str, package: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(app_mark_non_english(project=project, package=package))


class ProjectProgressApi(APIView):
    """Members of the project: counts per state and whether post-processing may start."""

    permission_classes = [IsAuthenticated]

    class ProjectProgressSerializer(serializers.Serializer):
        screens = serializers.DictField(child=serializers.IntegerField())
        excluded = serializers.DictField(child=serializers.IntegerField())
        questions = serializers.DictField(child=serializers.IntegerField())
        answers = serializers.IntegerField()
        not_answerable_pending = serializers.IntegerField()
        ready_for_postprocessing = serializers.BooleanField()

    @extend_schema(tags=TAGS, responses={200: ProjectProgressSerializer, 404: ERRORS[404]})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        return Response(project_progress(project=project))


# --- assignments (the caller's own only; anybody else's is 404) ---------------------------


class AssignmentDetailApi(APIView):
    """The assignment's annotator only: the same payload as ``next`` (reload)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, responses={200: NextSerializer, 404: ERRORS[404]})
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_get_for_user(assignment_id=assignment_id, user=request.user)
        return Response(assignment_payload(assignment=assignment))


class AssignmentSubmitApi(APIView):
    """The assignment's annotator only: submit the work (body per stage: see SubmitBody).

    The same body twice gives the same answer and stores one row. After a lost lease the
    body is kept as the draft and the answer is 409."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, request=SUBMIT_BODY, responses={200: AssignmentResultSerializer, **ERRORS})
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_submit(assignment_id=assignment_id, user=request.user, data=_body(request))
        return Response(assignment_result(assignment=assignment))


class AssignmentSkipApi(APIView):
    """The assignment's annotator only: decline the work with a reason (never offered again)."""

    permission_classes = [IsAuthenticated]

    class SkipInSerializer(serializers.Serializer):
        reason = serializers.CharField()

    @extend_schema(tags=TAGS, request=SkipInSerializer, responses={200: AssignmentResultSerializer, **ERRORS})
    def post(self, request: Request, assignment_id: int) -> Response:
        reason = _body(request).get("reason", "")
        assignment = assignment_skip(assignment_id=assignment_id, user=request.user, reason=reason)
        return Response(assignment_result(assignment=assignment))


class AssignmentReleaseApi(APIView):
    """The assignment's annotator only: give the work back to the queue."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, request=None, responses={200: AssignmentResultSerializer, **ERRORS})
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_release(assignment_id=assignment_id, user=request.user)
        return Response(assignment_result(assignment=assignment))


class AssignmentExtendApi(APIView):
    """The assignment's annotator only: renew an open lease."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, request=None, responses={200: AssignmentResultSerializer, **ERRORS})
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_extend(assignment_id=assignment_id, user=request.user)
        return Response(assignment_result(assignment=assignment))


class AssignmentDraftApi(APIView):
    """The assignment's annotator only: read (GET) or replace (PUT) the work-in-progress draft.

    The body of PUT is the draft itself (any JSON object, at most 256 KB)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, responses={200: AssignmentResultSerializer, 404: ERRORS[404]})
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_get_for_user(assignment_id=assignment_id, user=request.user)
        return Response(assignment_result(assignment=assignment))

    @extend_schema(
        tags=TAGS,
        request={"application/json": {"type": "object", "additionalProperties": True}},
        responses={200: AssignmentResultSerializer, **ERRORS},
    )
    def put(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_draft_save(assignment_id=assignment_id, user=request.user, draft=_body(request))
        return Response(assignment_result(assignment=assignment))

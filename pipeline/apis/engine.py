"""REST API of the pipeline engine: stage queues and assignments (a public wire contract).

One class per operation: parse input, call one service, shape output. Every class says
who may call it. Errors come from the one handler (``annotation.apis.errors``):
400 names the offending ``field``, 403/404 for what the caller may not do or see, 409
for lease and state conflicts. Authentication: session (browser, CSRF) or
``Authorization: Token <key>``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.serializers import PolymorphicProxySerializerExtension
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.exceptions import ApplicationError
from annotation.permissions import (
    IsAuthenticated,
    assignment_get_for_annotator,
    project_get_for_lead,
    project_get_for_member,
)
from pipeline.apis.mine import StandingSerializer
from pipeline.engine import (
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
    stages,
    stages_for_user,
    work_payload,
)
from pipeline.stages.wire import AssignmentResultSerializer

TAGS = ["engine"]


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ApplicationError("The body must be a JSON object.", field="body")
    return dict(request.data)


# --- wire format: the stages' own serializers (``pipeline.stages.wire`` and each stage module) ---


def _unique(classes: list[type[serializers.Serializer]]) -> list[type[serializers.Serializer]]:
    return list(dict.fromkeys(classes))


# ``next`` and ``GET /api/assignments/<id>/``: one payload per stage, told apart by ``stage``.
NEXT_PAYLOAD = PolymorphicProxySerializer(
    component_name="StagePayload",
    serializers={name: stage.payload_serializer for name, stage in stages().items()},
    resource_type_field_name="stage",
)


class AnyOfProxySerializer(PolymorphicProxySerializer):
    """Documents a union whose members may overlap as ``anyOf`` (drf-spectacular's proxy says ``oneOf``)."""


class AnyOfProxySerializerExtension(PolymorphicProxySerializerExtension):
    target_class = f"{__name__}.AnyOfProxySerializer"

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        return {"anyOf": super().map_serializer(auto_schema, direction)["oneOf"]}


# A submit's body: the one of the assignment's stage (the server knows which, so bodies carry no
# ``stage``). ``anyOf``: a questions-1 body is also a valid questions-2 body (``flags`` is optional),
# so under ``oneOf`` (exactly one match) a validating client or proxy refused every questions-1 body.
SUBMIT_BODY = AnyOfProxySerializer(
    component_name="SubmitBody",
    serializers=_unique([stage.submit_serializer for stage in stages().values()]),
    resource_type_field_name=None,
)


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
        standing = StandingSerializer(help_text="your standing in the stage (quality control)")

    @extend_schema(tags=TAGS, responses={200: StageRowSerializer(many=True), 404: ERRORS[404]})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        rows = stages_for_user(project=project, user=request.user)
        return Response(self.StageRowSerializer(rows, many=True).data)


class StageNextApi(APIView):
    """Members of the project (``answers``: the answer pool): the caller's open assignment
    of the stage, or a new lease; 204 when nothing is available to the caller."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        tags=TAGS,
        request=None,
        responses={200: NEXT_PAYLOAD, 204: OpenApiResponse(description="nothing available to you"), **ERRORS},
    )
    def post(self, request: Request, slug: str, stage: str) -> Response:
        work = assignment_next_by_slug(slug=slug, user=request.user, stage=stage)
        if work is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(work_payload(work=work))


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
        target = serializers.FloatField(help_text="the project's share of not-answerable questions, in every split")
        splits = serializers.DictField(
            child=serializers.DictField(),
            help_text="per split: questions, not_answerable_questions, pending, default, share, sampled",
        )

    @extend_schema(
        tags=TAGS, request=NotAnswerableStartInSerializer, responses={200: NotAnswerableStartOutSerializer, **ERRORS}
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        body = _body(request)
        return Response(not_answerable_start(project=project, sample_size=body.get("sample_size")))


class AppNonEnglishApi(APIView):
    """Leads of the project: decide an app's language. Non-English (default): every screen of
    the app leaves every queue and the release, whatever its state; ``{"english": true}``: the
    app is English, the project's rule will not exclude it, and what its language excluded comes
    back (screens to where they were, questions dropped with ``non-english-app`` to their state)."""

    permission_classes = [IsAuthenticated]

    class AppNonEnglishInSerializer(serializers.Serializer):
        english = serializers.BooleanField(required=False, default=False)

    class AppNonEnglishOutSerializer(serializers.Serializer):
        app = serializers.CharField()
        non_english = serializers.BooleanField()
        excluded = serializers.IntegerField(help_text="screens excluded now")
        excluded_by_state = serializers.DictField(child=serializers.IntegerField(), help_text="...by their state")
        questions_dropped = serializers.IntegerField()
        language_set_by = serializers.CharField(help_text="who decided the app's language: lead")
        restored = serializers.IntegerField(help_text="screens back from the exclusion (english: true)")
        restored_by_state = serializers.DictField(
            child=serializers.IntegerField(), help_text="...by the state they return to"
        )
        questions_restored = serializers.IntegerField(help_text="questions back from non-english-app")
        judged = serializers.IntegerField(help_text="the app's screens with a pre-filtering decision")
        judged_non_english = serializers.IntegerField()

    @extend_schema(tags=TAGS, request=AppNonEnglishInSerializer, responses={200: AppNonEnglishOutSerializer, **ERRORS})
    def post(self, request: Request, slug: str, package: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        english = _body(request).get("english", False)
        if not isinstance(english, bool):
            raise ApplicationError("english is true or false.", field="english")
        return Response(app_mark_non_english(project=project, package=package, english=english))


class ProjectProgressApi(APIView):
    """Members of the project: counts per state and whether post-processing may start."""

    permission_classes = [IsAuthenticated]

    class ProjectProgressSerializer(serializers.Serializer):
        screens = serializers.DictField(child=serializers.IntegerField(), help_text="screens by state")
        excluded = serializers.DictField(child=serializers.IntegerField(), help_text="excluded screens by reason")
        questions = serializers.DictField(child=serializers.IntegerField(), help_text="questions by state")
        answers = serializers.IntegerField()
        pending = serializers.DictField(child=serializers.IntegerField(), help_text="units waiting, per stage")
        not_answerable_pending = serializers.IntegerField(help_text="pending['not-answerable'] (kept for clients)")
        ready_for_postprocessing = serializers.BooleanField()

    @extend_schema(tags=TAGS, responses={200: ProjectProgressSerializer, 404: ERRORS[404]})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        return Response(self.ProjectProgressSerializer(project_progress(project=project).as_api()).data)


# --- assignments (the caller's own only; anybody else's is 404) ---------------------------


class AssignmentDetailApi(APIView):
    """The assignment's annotator only: the same payload as ``next`` (reload)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, responses={200: NEXT_PAYLOAD, 404: ERRORS[404]})
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
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
        assignment = assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
        return Response(assignment_result(assignment=assignment))

    @extend_schema(
        tags=TAGS,
        request={"application/json": {"type": "object", "additionalProperties": True}},
        responses={200: AssignmentResultSerializer, **ERRORS},
    )
    def put(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_draft_save(assignment_id=assignment_id, user=request.user, draft=_body(request))
        return Response(assignment_result(assignment=assignment))

"""Quality control API for leads (docs/quality.md, "API"): every member's standings and quality
figures, one member's report (control accuracy over time with its items, quality events), the
lead's actions on a standing, the quality event log, and gold items (list, create, promote,
activate/deactivate).

Who may use it: leads of the project and site admins. Other members get 403, users who are not
members 404, anonymous callers 403 (the one exception handler shapes every error as ``detail``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.apis.params import PageParams, Pagination, QueryParams, choice_param, id_param, query_params
from annotation.models import Project, ReviewVerdict, Stage
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.engine import stage_get
from pipeline.quality.figures import (
    figures_with_standings,
    quality_figures_current,
    quality_figures_rows,
    quality_figures_start,
)
from pipeline.quality.gold import gold_promotable, gold_promote, gold_set_active, gold_unit_create
from pipeline.quality.report import (
    SORT_KEYS,
    GoldStat,
    control_timeline,
    gold_stat,
    gold_stat_rows,
    gold_stats_of,
    member_get_for_report,
    quality_events,
    quality_report,
    rule_label,
)
from pipeline.quality.review_gold import review_gold_create
from pipeline.quality.rules import LEAD_ACTIONS
from pipeline.quality.standing import standing_act
from pipeline.quality.writers import FAULTED_SHOWN, faulted_questions

ERRORS: dict[int, Any] = {
    400: OpenApiResponse(ErrorSerializer, description="bad input (the body says which field)"),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project, member or item, or not a member"),
}
CONFLICT = OpenApiResponse(ErrorSerializer, description="already so (paused, or already gold)")


class StageParams(QueryParams):
    stage = choice_param(Stage.values, required=False, help_text="only this stage")


class AnnotatorStandingSerializer(serializers.Serializer):
    stage = serializers.CharField()
    status = serializers.CharField(help_text="qualifying / active / paused / not_qualified")
    reason = serializers.CharField(help_text="why, in the annotator's words")
    attempt = serializers.IntegerField(help_text="qualification attempts started")
    items_done = serializers.IntegerField()
    qualification_correct = serializers.IntegerField(help_text="last attempt: right")
    qualification_items = serializers.IntegerField(help_text="last attempt: items done")
    qualification_score = serializers.FloatField(allow_null=True)


class AnnotatorFiguresSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    role = serializers.CharField()
    status = serializers.CharField(help_text="the worst of their stage standings (blank: none yet)")
    standings = AnnotatorStandingSerializer(many=True)
    qualification_score = serializers.FloatField(allow_null=True, help_text="lowest last-attempt score")
    control_correct = serializers.IntegerField()
    control_items = serializers.IntegerField()
    control_accuracy = serializers.FloatField(allow_null=True)
    agreement_agreed = serializers.IntegerField(help_text="validation/test answers in the majority group")
    agreement_answers = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)
    reviews_accepted = serializers.IntegerField()
    reviews_rejected = serializers.IntegerField()
    questions_written = serializers.IntegerField()
    questions_flagged = serializers.IntegerField(help_text="judged invalid or not answerable by an answerer")
    questions_flagged_pass2 = serializers.IntegerField(help_text="flagged by the screen's pass-2 writer")
    questions_faulted = serializers.IntegerField(help_text="judged invalid by an answerer or flagged in pass 2")
    invalid_rate = serializers.FloatField(allow_null=True, help_text="questions_faulted / questions_written")
    review_agreement_agreed = serializers.IntegerField(
        help_text="reviews of double-reviewed submissions with the other reviewer's verdict"
    )
    review_agreement_compared = serializers.IntegerField(help_text="reviews of double-reviewed submissions")
    review_agreement = serializers.FloatField(allow_null=True)
    submitted = serializers.IntegerField()
    skips = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True, help_text="median submitted_at - created_at")


class ControlItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    gold_id = serializers.IntegerField()
    assignment_id = serializers.IntegerField()
    stage = serializers.CharField()
    correct = serializers.BooleanField()
    feedback = serializers.JSONField(help_text="{given, gold, why}")
    created_at = serializers.DateTimeField()


class AccuracyPointSerializer(serializers.Serializer):
    # A field named like Field.label: fine for DRF (its metaclass collects it), not for the stubs.
    label = serializers.CharField(help_text="the day, or the run of items (1–10)")  # type: ignore[assignment]
    correct = serializers.IntegerField()
    items = serializers.IntegerField()
    accuracy = serializers.FloatField()
    results = ControlItemSerializer(many=True)


class QualityEventSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    stage = serializers.CharField()
    rule = serializers.CharField()
    rule_label = serializers.SerializerMethodField()
    status_before = serializers.CharField()
    status_after = serializers.CharField()
    actor = serializers.SerializerMethodField(help_text="the lead who acted; null: a rule")
    figures = serializers.JSONField()
    note = serializers.CharField()
    created_at = serializers.DateTimeField()

    def get_rule_label(self, obj: Any) -> str:
        return rule_label(obj.rule)

    def get_actor(self, obj: Any) -> str | None:
        return obj.actor.username if obj.actor is not None else None


class FaultedQuestionSerializer(serializers.Serializer):
    """A question behind a writer's "invalid questions" figure (``writers.faulted_questions``)."""

    id = serializers.IntegerField(source="pk")
    stage = serializers.CharField(source="source", help_text="the writing stage it was written in")
    screen_id = serializers.IntegerField()
    rico_id = serializers.CharField(source="screen.rico_id")
    text = serializers.CharField(help_text="as written")
    judged = serializers.IntegerField(help_text="answers judging it invalid or not answerable (counted against it)")
    flag_reason = serializers.CharField(
        help_text="the pass-2 writer's flag: a code of the questions stage's review reasons (blank: none)"
    )
    flag_label = serializers.SerializerMethodField(help_text="the flag in the writing rule's words (blank: none)")
    flagged_by = serializers.IntegerField(
        source="flagged_by_id", allow_null=True, help_text="the pass-2 assignment that flagged it"
    )

    def get_flag_label(self, obj: Any) -> str:
        reasons = stage_get(Stage.QUESTIONS_2).review_reasons  # the stage whose writers flag
        return reasons.get(obj.flag_reason, obj.flag_reason)


class AnnotatorReportSerializer(serializers.Serializer):
    figures = AnnotatorFiguresSerializer()
    timeline = AccuracyPointSerializer(many=True, help_text="control accuracy per day (or per N items)")
    events = QualityEventSerializer(many=True, help_text="newest first (the last 200)")
    faulted_questions = FaultedQuestionSerializer(
        many=True,
        help_text=f"the questions behind questions_faulted: judged invalid / not answerable by an answerer or "
        f"flagged by a pass-2 writer, newest first (the last {FAULTED_SHOWN})",
    )


class GoldItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="gold.pk")
    stage = serializers.CharField(source="gold.stage")
    screen_id = serializers.IntegerField(source="gold.screen_id")
    rico_id = serializers.CharField(source="gold.screen.rico_id")
    question_id = serializers.IntegerField(source="gold.question_id", allow_null=True)
    answer = serializers.JSONField(source="gold.answer")
    source = serializers.CharField(source="gold.source")  # type: ignore[assignment]
    origin_id = serializers.IntegerField(source="gold.origin_id", allow_null=True)
    active = serializers.BooleanField(source="gold.active")
    exposures = serializers.IntegerField(
        source="gold.exposures", help_text="how many times it was served (leases of it, to anybody)"
    )
    retired = serializers.SerializerMethodField(help_text="served gold_exposures_max times: no longer served")
    note = serializers.CharField(source="gold.note")
    served = serializers.IntegerField()
    correct = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)
    suspect = serializers.BooleanField(help_text="most annotators fail it (3+ served, under half right)")

    def get_retired(self, stat: GoldStat) -> bool:
        limit = self.context.get("exposures_max", 0)
        return bool(limit) and stat.gold.exposures >= limit


class GoldItemPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = GoldItemSerializer(many=True)


def _gold_out(gold: Any, project: Project) -> dict[str, Any]:
    """A fresh gold item with its (empty) results, shaped like the list's rows."""
    return GoldItemSerializer(GoldStat(gold, 0, 0), context={"exposures_max": project.gold_exposures_max}).data


class QualityReportPageSerializer(serializers.Serializer):
    """One page of members' figures, with when they were computed."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True, help_text="when the figures were computed")
    refreshing = serializers.BooleanField(help_text="a job is computing them again (they were old)")
    results = AnnotatorFiguresSerializer(many=True)


class QualityReportApi(APIView):
    """``GET /api/projects/<slug>/quality/``: the members with their standings and figures, a page at a
    time. The figures are those the ``quality-figures`` job last computed (``computed_at``; a job is
    queued when they are old, ``refreshing``); standings are read live. ``?stage=`` restricts to a
    stage, ``?sort=`` sorts (``-`` descending), ``?q=`` keeps the members whose name contains it. Leads
    only."""

    permission_classes = [IsAuthenticated]

    class ReportParams(PageParams, StageParams):
        sort = choice_param(
            [*SORT_KEYS, *(f"-{k}" for k in SORT_KEYS)], default="username", help_text="a column; `-`: descending"
        )
        q = serializers.CharField(required=False, allow_blank=True, max_length=150, help_text="name contains")

    @extend_schema(
        operation_id="quality_report",
        summary="The members' standings and quality figures, a page at a time",
        parameters=[ReportParams],
        responses={200: QualityReportPageSerializer, **ERRORS},
        tags=["quality"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        params = query_params(self.ReportParams, request)
        stage = params.get("stage")
        found = quality_figures_rows(project=project, stage=stage, sort=params["sort"], search=params.get("q", ""))
        state = quality_figures_current(project=project)
        paginator = Pagination()
        page = paginator.paginate_queryset(found, request, view=self)
        rows = figures_with_standings(project=project, rows=list(page or []), stage=stage)
        response = paginator.get_paginated_response(AnnotatorFiguresSerializer(rows, many=True).data)
        response.data = {**response.data, "computed_at": state.computed_at, "refreshing": state.refreshing}
        return response


class QualityRefreshApi(APIView):
    """``POST /api/projects/<slug>/quality/refresh/``: compute the quality figures again in the background
    (the ``quality-figures`` job; the one alive already if there is one). Leads only."""

    permission_classes = [IsAuthenticated]

    class QualityRefreshOutputSerializer(serializers.Serializer):
        job_id = serializers.IntegerField()
        status = serializers.CharField()

    @extend_schema(
        operation_id="quality_refresh",
        summary="Compute the quality figures again",
        request=None,
        responses={202: QualityRefreshOutputSerializer, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        job = quality_figures_start(project=project, user=request.user)
        return Response({"job_id": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)


class AnnotatorReportApi(APIView):
    """``GET /api/projects/<slug>/quality/annotators/<user_id>/``: one member's figures, control
    accuracy over time (per day, or ``?per=N`` items) with the items behind each point, their
    quality events, and the questions behind their "invalid questions" figure. Leads only."""

    permission_classes = [IsAuthenticated]

    class ReportParams(StageParams):
        per = serializers.IntegerField(
            min_value=1, max_value=10_000, required=False, help_text="points of N control items (else per day)"
        )

    @extend_schema(
        operation_id="quality_annotator",
        summary="One member's quality report",
        parameters=[ReportParams],
        responses={200: AnnotatorReportSerializer, **ERRORS},
        tags=["quality"],
    )
    def get(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        member_get_for_report(project=project, user_id=user_id)
        params = query_params(self.ReportParams, request)
        stage = params.get("stage")
        body: dict[str, Any] = {
            "figures": quality_report(project=project, stage=stage, user_id=user_id)[0],
            "timeline": control_timeline(project=project, user_id=user_id, stage=stage, per=params.get("per")),
            "events": list(quality_events(project=project, user_id=user_id, stage=stage)[:200]),
            "faulted_questions": faulted_questions(project=project, author_id=user_id, stage=stage),
        }
        return Response(AnnotatorReportSerializer(body).data)


class StandingActionApi(APIView):
    """``POST /api/projects/<slug>/quality/annotators/<user_id>/standing/``: pause, reinstate or
    requalify a member in a stage; recorded as a quality event with the caller as actor. Leads only."""

    permission_classes = [IsAuthenticated]

    class StandingActionInputSerializer(serializers.Serializer):
        stage = serializers.ChoiceField(choices=Stage.values)
        action = serializers.ChoiceField(choices=list(LEAD_ACTIONS))
        note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)

    @extend_schema(
        operation_id="quality_standing_action",
        summary="A lead's action on a member's standing in a stage",
        request=StandingActionInputSerializer,
        responses={200: AnnotatorStandingSerializer, 409: CONFLICT, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str, user_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.StandingActionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        standing = standing_act(project=project, user_id=user_id, actor=request.user, **data.validated_data)
        row = quality_report(project=project, stage=standing.stage, user_id=user_id)[0]
        return Response(AnnotatorStandingSerializer(row.standings[0]).data)


class QualityEventPageSerializer(serializers.Serializer):
    """One page of quality events (what ``Pagination`` answers)."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = QualityEventSerializer(many=True)


class QualityEventListApi(APIView):
    """``GET /api/projects/<slug>/quality/events/``: the project's quality decisions, newest
    first, paginated; ``?user=<id>`` and ``?stage=`` filter. Leads only."""

    permission_classes = [IsAuthenticated]

    class EventParams(PageParams, StageParams):
        user = id_param(required=False, help_text="only this member's events")

    @extend_schema(
        operation_id="quality_events",
        summary="Quality decisions: who, when, which rule, the figures",
        parameters=[EventParams],
        responses={200: QualityEventPageSerializer, **ERRORS},
        tags=["quality"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        params = query_params(self.EventParams, request)
        events = quality_events(project=project, user_id=params.get("user"), stage=params.get("stage"))
        paginator = Pagination()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(QualityEventSerializer(page or [], many=True).data)


class GoldListCreateApi(APIView):
    """``GET /api/projects/<slug>/quality/gold/``: gold items (``?stage=``) with how often each was
    served and answered right. ``POST``: a new gold item from a unit and its answer. Leads only."""

    permission_classes = [IsAuthenticated]

    class GoldCreateInputSerializer(serializers.Serializer):
        stage = serializers.ChoiceField(choices=Stage.values)
        rico_id = serializers.CharField(help_text="the screen")
        question_id = serializers.IntegerField(required=False, allow_null=True, help_text="answers stage")
        answer = serializers.JSONField(help_text="a submit body of the stage (validated by it)")
        note = serializers.CharField(required=False, allow_blank=True, default="")

        def validate_answer(self, value: Any) -> Any:
            if not isinstance(value, dict):
                raise serializers.ValidationError("A JSON object: the stage's submit body.")
            return value

    class GoldListParams(PageParams, StageParams):
        pass

    @extend_schema(
        operation_id="quality_gold_list",
        summary="Gold items with their results, a page at a time",
        parameters=[GoldListParams],
        responses={200: GoldItemPageSerializer, **ERRORS},
        tags=["quality"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        stage = query_params(self.GoldListParams, request).get("stage")
        paginator = Pagination()
        page = paginator.paginate_queryset(gold_stat_rows(project=project, stage=stage), request, view=self)
        return paginator.get_paginated_response(
            GoldItemSerializer(
                gold_stats_of(page or []), many=True, context={"exposures_max": project.gold_exposures_max}
            ).data
        )

    @extend_schema(
        operation_id="quality_gold_create",
        summary="Write a gold item",
        request=GoldCreateInputSerializer,
        responses={201: GoldItemSerializer, 409: CONFLICT, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.GoldCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        gold = gold_unit_create(
            project=project,
            stage=v["stage"],
            rico_id=v["rico_id"],
            question_id=v.get("question_id"),
            answer=v["answer"],
            user=request.user,
            note=v["note"],
        )
        return Response(_gold_out(gold, project), status=status.HTTP_201_CREATED)


class PromotableSerializer(serializers.Serializer):
    assignment_id = serializers.IntegerField(source="pk")
    stage = serializers.CharField()
    rico_id = serializers.CharField(source="screen.rico_id")
    question_id = serializers.IntegerField(allow_null=True)
    question = serializers.CharField(source="question.text", allow_null=True, default=None)
    annotator = serializers.CharField(source="annotator.username", allow_null=True, default=None)
    submitted_at = serializers.DateTimeField()
    submission = serializers.JSONField(help_text="the normalised submission (promoted as it is unless edited)")


class GoldPromotableApi(APIView):
    """``GET /api/projects/<slug>/quality/gold/promotable/``: the newest accepted submissions of the
    stages with gold (``?stage=``) whose unit is not gold yet, to promote. Leads only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="quality_gold_promotable",
        summary="Recent accepted submissions to promote to gold",
        parameters=[StageParams],
        responses={200: PromotableSerializer(many=True), **ERRORS},
        tags=["quality"],
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        stage = query_params(StageParams, request).get("stage")
        return Response(PromotableSerializer(gold_promotable(project=project, stage=stage), many=True).data)


class GoldPromoteApi(APIView):
    """``POST /api/projects/<slug>/quality/gold/promote/``: make a submission gold, its answer as
    submitted or as edited (``answer``). Leads only."""

    permission_classes = [IsAuthenticated]

    class GoldPromoteInputSerializer(serializers.Serializer):
        assignment_id = serializers.IntegerField()
        answer = serializers.JSONField(required=False, allow_null=True, help_text="edited submit body")

        def validate_answer(self, value: Any) -> Any:
            if value is not None and not isinstance(value, dict):
                raise serializers.ValidationError("A JSON object: the stage's submit body.")
            return value

    @extend_schema(
        operation_id="quality_gold_promote",
        summary="Promote a submission to gold",
        request=GoldPromoteInputSerializer,
        responses={201: GoldItemSerializer, 409: CONFLICT, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.GoldPromoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        gold = gold_promote(
            project=project,
            assignment_id=data.validated_data["assignment_id"],
            user=request.user,
            answer=data.validated_data.get("answer"),
        )
        return Response(_gold_out(gold, project), status=status.HTTP_201_CREATED)


class GoldReviewApi(APIView):
    """``POST /api/projects/<slug>/quality/gold/review/``: make a reviewed submission a gold review
    (``pipeline.quality.review_gold``), its verdict the standing review's or ``verdict`` (and
    ``reason``, for a rejection). Leads only."""

    permission_classes = [IsAuthenticated]

    class GoldReviewInputSerializer(serializers.Serializer):
        submission_id = serializers.IntegerField(help_text="the reviewed submission (an assignment id)")
        verdict = serializers.ChoiceField(
            choices=ReviewVerdict.values, required=False, help_text="default: its standing review's"
        )
        reason = serializers.CharField(required=False, allow_blank=True, default="", help_text="a rejection's rule")
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="quality_gold_review",
        summary="Make a reviewed submission a gold review",
        request=GoldReviewInputSerializer,
        responses={201: GoldItemSerializer, 409: CONFLICT, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.GoldReviewInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        gold = review_gold_create(
            project=project,
            submission_id=v["submission_id"],
            user=request.user,
            verdict=v.get("verdict"),
            reason=v["reason"],
            note=v["note"],
        )
        return Response(_gold_out(gold, project), status=status.HTTP_201_CREATED)


class GoldActiveApi(APIView):
    """``POST /api/projects/<slug>/quality/gold/<gold_id>/active/``: ``{"active": false}``
    deactivates a gold item (it is served no more), ``true`` activates it. Leads only."""

    permission_classes = [IsAuthenticated]

    class GoldActiveInputSerializer(serializers.Serializer):
        active = serializers.BooleanField()

    @extend_schema(
        operation_id="quality_gold_active",
        summary="Activate or deactivate a gold item",
        request=GoldActiveInputSerializer,
        responses={200: GoldItemSerializer, **ERRORS},
        tags=["quality"],
    )
    def post(self, request: Request, slug: str, gold_id: int) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        data = self.GoldActiveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        gold_set_active(project=project, gold_id=gold_id, active=data.validated_data["active"])
        return Response(GoldItemSerializer(gold_stat(project=project, gold_id=gold_id)).data)

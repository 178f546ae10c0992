"""My work API: the JSON twin of the annotator's "My work" page (``pipeline.quality.mine``).

Who may use it: any member of the project (any role) and site admins, for their own work only:
there is no parameter naming another user. Users who are not members get 404, anonymous
callers 403.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.params import QueryParams, choice_param, query_params
from annotation.models import Stage
from annotation.permissions import IsAuthenticated, member_get, project_get_for_member
from pipeline.quality.mine import (
    HISTORY_LIMIT,
    feedback_by_stage,
    my_work_figures,
    my_work_history,
    standing_views,
)

TAGS = ["my work"]


class StandingSerializer(serializers.Serializer):
    status = serializers.CharField(help_text='qualifying, active, paused, not_qualified; "" = not started')
    summary = serializers.CharField(help_text='the status and why, e.g. "Qualifying: qualification set: 3 of 10 done"')
    reason = serializers.CharField(help_text="why the status is what it is")
    can_start = serializers.BooleanField(help_text="whether asking for the next item may give one")
    qualification_mode = serializers.CharField(help_text='"gold" (a set of gold items), "review" or ""')
    qualification_done = serializers.IntegerField(allow_null=True, help_text="items of the running set done")
    qualification_items = serializers.IntegerField(allow_null=True, help_text="items in a qualification set")
    retry_at = serializers.DateTimeField(allow_null=True, help_text="not qualified: when another attempt may start")
    attempts_left = serializers.IntegerField(allow_null=True)


class StageStandingSerializer(StandingSerializer):
    stage = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]


class ReviewBriefSerializer(serializers.Serializer):
    verdict = serializers.CharField(help_text="accepted or rejected")
    reason = serializers.CharField(help_text="rejections: the rule (a code of the stage's review reasons)")
    reason_label = serializers.CharField()
    comment = serializers.CharField(help_text="the reviewer's comment")


class ControlBriefSerializer(serializers.Serializer):
    correct = serializers.BooleanField()
    purpose = serializers.CharField(help_text="qualification")
    given = serializers.DictField(help_text="your submission")
    gold = serializers.DictField(help_text="the gold answer; empty for a second sample's item (gold_hidden)")
    why = serializers.CharField(help_text="what differed; empty for a second sample's item")
    gold_hidden = serializers.BooleanField(help_text="an item of the set's second sample: only whether it was right")


class QuestionFlagBriefSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="your question")
    reason = serializers.CharField(help_text="the writing rule (a code of the stage's review reasons)")
    reason_label = serializers.CharField()


class HistoryRowSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="the assignment")
    stage = serializers.CharField()
    status = serializers.CharField(help_text="leased (still open), submitted or skipped")
    created_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    rico_id = serializers.CharField()
    question = serializers.CharField(help_text="answers, not-answerable: the question")
    questions = serializers.ListField(child=serializers.CharField(), help_text="question stages: what you wrote")
    kind = serializers.CharField(help_text="work or qualification (a control item is work, always)")
    review_state = serializers.CharField(help_text='"", sampled (waiting for review), accepted or rejected')
    review = ReviewBriefSerializer(allow_null=True)
    control = ControlBriefSerializer(
        allow_null=True, help_text="a qualification item's result, once its set is decided"
    )
    skip_reason = serializers.CharField()
    flags = QuestionFlagBriefSerializer(many=True, help_text="questions you wrote that the pass-2 writer flagged")


class StageCountsSerializer(serializers.Serializer):
    stage = serializers.CharField()
    submitted = serializers.IntegerField()
    skipped = serializers.IntegerField()
    open = serializers.IntegerField()


class FiguresSerializer(serializers.Serializer):
    items_done = serializers.IntegerField(help_text="submitted items, every stage")
    skipped = serializers.IntegerField()
    control_items = serializers.IntegerField(help_text="control items scored before today")
    control_correct = serializers.IntegerField()
    control_accuracy = serializers.FloatField(
        allow_null=True,
        help_text="0..1, over control items scored before today (a whole day at a time); null before the first",
    )
    reviewed = serializers.IntegerField()
    review_accepted = serializers.IntegerField()
    review_acceptance = serializers.FloatField(allow_null=True, help_text="0..1; null before the first review")
    reviews_held_back = serializers.ListField(
        child=serializers.CharField(),
        help_text="stages (qualified by review, the caller active) whose reviews of the caller's work since they "
        "qualified count here and show in the history from the day after they are made",
    )
    questions_written = serializers.IntegerField()
    questions_flagged = serializers.IntegerField(help_text="judged invalid or not answerable by an answerer")
    questions_flagged_pass2 = serializers.IntegerField(help_text="flagged by the screen's pass-2 writer")
    questions_faulted = serializers.IntegerField(help_text="either (each question once)")
    invalid_rate = serializers.FloatField(allow_null=True, help_text="questions_faulted / questions_written")
    per_stage = StageCountsSerializer(many=True)


class FeedbackItemSerializer(serializers.Serializer):
    assignment_id = serializers.IntegerField()
    correct = serializers.BooleanField()
    rico_id = serializers.CharField()
    question = serializers.CharField()
    why = serializers.CharField()
    gold_hidden = serializers.BooleanField(help_text="an item of the set's second sample: no right answer shown")


class FeedbackSerializer(serializers.Serializer):
    stage = serializers.CharField()
    kind = serializers.CharField(help_text="qualification (the last decided set)")
    items = FeedbackItemSerializer(many=True)


class MyWorkSerializer(serializers.Serializer):
    standings = StageStandingSerializer(many=True)
    figures = FiguresSerializer()
    history = HistoryRowSerializer(many=True, help_text=f"newest first, at most {HISTORY_LIMIT}")
    feedback = FeedbackSerializer(many=True)


class MyWorkApi(APIView):
    """``GET``: the caller's own history, standings, figures and feedback in the project."""

    permission_classes = [IsAuthenticated]

    class MyWorkParams(QueryParams):
        stage = choice_param(Stage.values, required=False, help_text="only this stage's history")

    @extend_schema(
        tags=TAGS,
        summary="Your own work in the project",
        parameters=[MyWorkParams],
        responses={
            200: MyWorkSerializer,
            400: OpenApiResponse(description="unknown stage"),
            403: OpenApiResponse(description="not logged in"),
            404: OpenApiResponse(description="no such project, or not a member"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_member(user=request.user, slug=slug)
        stage = query_params(self.MyWorkParams, request).get("stage")
        membership = member_get(project=project, user=request.user)
        views = standing_views(project=project, user=request.user, membership=membership)
        data: dict[str, Any] = {
            "standings": [v for v in views.values() if v.status or v.qualification_mode],
            "figures": my_work_figures(project=project, user=request.user),
            "history": my_work_history(project=project, user=request.user, stage=stage),
            "feedback": [
                {"stage": definition.name, "kind": kind, "items": items}
                for definition, kind, items in feedback_by_stage(project=project, user=request.user)
            ],
        }
        return Response(MyWorkSerializer(data).data)

"""Analysis API: the JSON twin of the lead's analysis page (``pipeline.analytics``).

Who may use it: leads of the project and site admins. Annotators of the project get 403,
users who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.analytics.figures import analytics_project


class FunnelSerializer(serializers.Serializer):
    imported = serializers.IntegerField(help_text="screens imported")
    non_english = serializers.IntegerField(help_text="excluded by pre-filtering: non-English app")
    out_of_sync = serializers.IntegerField(help_text="excluded by pre-filtering: VH out of sync")
    eligible = serializers.IntegerField(help_text="past pre-filtering and not excluded")
    with_questions = serializers.IntegerField(help_text="with at least one question")
    with_answered = serializers.IntegerField(help_text="with at least one kept answer whose verdict is answered")


class BinSerializer(serializers.Serializer):
    # A field named like Field.label: fine for DRF (its metaclass collects it), not for the stubs.
    label = serializers.CharField(help_text='the bin ("10+" collects everything above)')  # type: ignore[assignment]
    count = serializers.IntegerField()
    share = serializers.FloatField(help_text="0..1 of the histogram's total")


class HistogramSerializer(serializers.Serializer):
    bins = BinSerializer(many=True)
    total = serializers.IntegerField()


class ElementSharesSerializer(serializers.Serializer):
    vh_only = serializers.IntegerField()
    drawn_only = serializers.IntegerField()
    mixed = serializers.IntegerField()
    total = serializers.IntegerField()
    shares = serializers.DictField(child=serializers.FloatField(), help_text="vh_only / drawn_only / mixed, 0..1")
    paper = serializers.DictField(child=serializers.FloatField(), help_text="the v1 paper's shares (52% / 47% / 0.5%)")


class AnswerElementsSerializer(serializers.Serializer):
    boxes_per_answer = HistogramSerializer(help_text="answered answers by number of boxes, 1..10+")
    sources = ElementSharesSerializer()


class CategoryRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    count = serializers.IntegerField()
    share = serializers.FloatField()
    paper_share = serializers.FloatField(allow_null=True, help_text="the category's share in the v1 paper's table 1")
    example = serializers.CharField(help_text="the paper's example question")


class CategoryTableSerializer(serializers.Serializer):
    rows = CategoryRowSerializer(many=True, help_text="largest first, other last")
    total = serializers.IntegerField()


class AgreementSerializer(serializers.Serializer):
    all = serializers.IntegerField()
    two = serializers.IntegerField()
    none = serializers.IntegerField()
    total = serializers.IntegerField()
    shares = serializers.DictField(child=serializers.FloatField())


class AnnotatorDaySerializer(serializers.Serializer):
    day = serializers.DateField()
    submissions = serializers.IntegerField()
    answers_judged = serializers.IntegerField(help_text="answers to questions post-processing decided")
    answers_kept = serializers.IntegerField()
    kept_share = serializers.FloatField(allow_null=True)


class AnnotatorSerializer(serializers.Serializer):
    username = serializers.CharField()
    submitted = serializers.DictField(child=serializers.IntegerField(), help_text="submissions per stage")
    submissions = serializers.IntegerField()
    skips = serializers.IntegerField()
    answers_judged = serializers.IntegerField()
    answers_kept = serializers.IntegerField()
    kept_share = serializers.FloatField(allow_null=True, help_text="share of judged answers kept (quality proxy)")
    days = AnnotatorDaySerializer(many=True)


class AnalysisOutputSerializer(serializers.Serializer):
    funnel = FunnelSerializer()
    questions_per_screen = HistogramSerializer(help_text="screens past the question passes, by questions 0..caps")
    answer_elements = AnswerElementsSerializer()
    categories = CategoryTableSerializer()
    agreement = AgreementSerializer()
    annotators = AnnotatorSerializer(many=True)


class AnalysisApi(APIView):
    """``GET``: every figure of the analysis page. Leads of the project and site admins only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="The project's analysis figures",
        responses={
            200: AnalysisOutputSerializer,
            403: OpenApiResponse(description="not a lead of the project"),
            404: OpenApiResponse(description="no such project, or not a member"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(AnalysisOutputSerializer(analytics_project(project=project)).data)

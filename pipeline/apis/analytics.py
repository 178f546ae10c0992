"""Analysis API: the JSON twin of the lead's analysis page (``pipeline.analytics``).

Who may use it: leads of the project and site admins. Annotators of the project get 403,
users who are not members 404, anonymous callers 403.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.params import PageParams, Pagination
from annotation.permissions import IsAuthenticated, project_get_for_lead
from pipeline.analytics.stored import snapshot_current, snapshot_start


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


class ModelCrowdAnswersSerializer(serializers.Serializer):
    questions = serializers.IntegerField(help_text="questions with a suggestion and a kept answer with an element")
    agree = serializers.IntegerField(help_text="of which the first suggested element is among the kept elements")
    share = serializers.FloatField(allow_null=True)


class ModelCrowdPrefilterSerializer(serializers.Serializer):
    screens = serializers.IntegerField(help_text="screens with a suggestion and a counting judgment")
    agree = serializers.IntegerField(help_text="of which the suggested judgments are the judges' majority")
    share = serializers.FloatField(allow_null=True)
    judges_screens = serializers.IntegerField(help_text="of those, screens judged twice or more")
    judges_agree = serializers.IntegerField(help_text="of which every judge agrees")
    judges_share = serializers.FloatField(allow_null=True)


class AcceptedSerializer(serializers.Serializer):
    shown = serializers.IntegerField(help_text="submissions with a suggestion shown")
    accepted = serializers.IntegerField(help_text="of which it was taken unchanged")
    share = serializers.FloatField(allow_null=True)


class ModelAndCrowdSerializer(serializers.Serializer):
    answers = ModelCrowdAnswersSerializer()
    prefilter = ModelCrowdPrefilterSerializer()
    accepted = serializers.DictField(child=AcceptedSerializer(), help_text="per assisted stage")


class AnalysisOutputSerializer(serializers.Serializer):
    funnel = FunnelSerializer()
    questions_per_screen = HistogramSerializer(help_text="screens past the question passes, by questions 0..caps")
    answer_elements = AnswerElementsSerializer()
    categories = CategoryTableSerializer()
    agreement = AgreementSerializer()
    annotators = AnnotatorSerializer(many=True, help_text="one page of them (``?page=``, ``?page_size=``)")
    model = ModelAndCrowdSerializer(
        allow_null=True, help_text="the suggestion backend's model against the crowd (docs/assist.md); null: no backend"
    )
    annotators_count = serializers.IntegerField(help_text="annotators over every page")
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    computed_at = serializers.DateTimeField(help_text="when these figures were computed (the analysis-figures job)")
    refreshing = serializers.BooleanField(help_text="a job is computing them again now (they were old)")


class AnalysisApi(APIView):
    """``GET``: every figure of the analysis page, as the ``analysis-figures`` job last computed them
    (``computed_at``; a job is queued when they are old), the annotators a page at a time. Leads of the
    project and site admins only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="The project's analysis figures",
        parameters=[PageParams],
        responses={
            200: AnalysisOutputSerializer,
            403: OpenApiResponse(description="not a lead of the project"),
            404: OpenApiResponse(description="no such project, or not a member"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        stored = snapshot_current(project=project, kind="analysis")
        pager = Pagination()
        annotators = pager.paginate_queryset(stored.figures.annotators, request)
        assert pager.page is not None  # set by paginate_queryset
        out = {
            **vars(stored.figures),
            "annotators": annotators,
            "model": getattr(stored.figures, "model", None),  # a snapshot stored before it existed: none
            "annotators_count": pager.page.paginator.count,
            "page": pager.page.number,
            "pages": pager.page.paginator.num_pages,
            "computed_at": stored.computed_at,
            "refreshing": stored.refreshing,
        }
        return Response(AnalysisOutputSerializer(out).data)


class AnalysisRefreshApi(APIView):
    """``POST /api/projects/<slug>/analysis/refresh/``: compute the analysis figures again in the background
    (the ``analysis-figures`` job; the one alive already if there is one). Leads of the project and site
    admins only."""

    permission_classes = [IsAuthenticated]

    class AnalysisRefreshOutputSerializer(serializers.Serializer):
        job_id = serializers.IntegerField()
        status = serializers.CharField()

    @extend_schema(
        operation_id="analysis_refresh",
        summary="Compute the analysis figures again",
        request=None,
        responses={
            202: AnalysisRefreshOutputSerializer,
            403: OpenApiResponse(description="not a lead of the project"),
            404: OpenApiResponse(description="no such project, or not a member"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        job = snapshot_start(project=project, kind="analysis", user=request.user)
        return Response({"job_id": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)

"""Reads of projects for the site's home and project pages: who sees what, and the stage funnel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Membership, Project, Question, Screen, ScreenState


@dataclass(frozen=True)
class ProjectFunnel:
    """Screens through the stages (PIPELINE.md, "Stage funnel"). Every number counts screens."""

    imported: int
    waiting_prefilter: int
    excluded: int
    excluded_by_reason: dict[str, int]
    eligible: int
    with_questions: int
    no_questions: int

    def steps(self) -> list[tuple[str, int]]:
        """The funnel's steps in order, for charts."""
        return [
            ("Imported", self.imported),
            ("Excluded", self.excluded),
            ("Eligible", self.eligible),
            ("With questions", self.with_questions),
        ]


def _count_subquery(qs: QuerySet[Any], *, group_by: str) -> Coalesce:
    counted = qs.order_by().values(group_by).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def project_list_for_user(*, user: Any) -> list[Project]:
    """The projects ``user`` may open (members: theirs; site admins: all), in one query.

    Each project carries ``role`` (``"lead"``, ``"annotator"`` or ``"admin"`` for a site
    admin without membership), ``screen_count``, ``eligible_count`` and ``question_count``.
    Counts come from correlated subqueries so that joins do not multiply them.
    """
    if not getattr(user, "is_authenticated", False):
        return []
    qs = Project.objects.all()
    if not user.is_superuser:
        qs = qs.filter(memberships__user=user)
    role = Membership.objects.filter(project=OuterRef("pk"), user=user).values("role")[:1]
    screens = Screen.objects.filter(project=OuterRef("pk"))
    eligible = screens.exclude(state__in=[ScreenState.PREFILTER, ScreenState.EXCLUDED])
    questions = Question.objects.filter(screen__project=OuterRef("pk"))
    projects: list[Project] = list(
        qs.annotate(
            member_role=Subquery(role),
            screen_count=_count_subquery(screens, group_by="project"),
            eligible_count=_count_subquery(eligible, group_by="project"),
            question_count=_count_subquery(questions, group_by="screen__project"),
        ).order_by("name", "slug")
    )
    for project in projects:
        project.role = project.member_role or "admin"  # type: ignore[attr-defined]
    return projects


def project_funnel(*, project: Project) -> ProjectFunnel:
    """The stage funnel of ``project`` in two queries (states, exclusion reasons)."""
    has_question = Exists(Question.objects.filter(screen=OuterRef("pk")))
    totals = Screen.objects.filter(project=project).aggregate(
        imported=Count("pk"),
        waiting_prefilter=Count("pk", filter=Q(state=ScreenState.PREFILTER)),
        excluded=Count("pk", filter=Q(state=ScreenState.EXCLUDED)),
        with_questions=Count("pk", filter=Q(has_question)),
        no_questions=Count("pk", filter=Q(state=ScreenState.NO_QUESTIONS)),
    )
    reasons = (
        Screen.objects.filter(project=project, state=ScreenState.EXCLUDED)
        .order_by()
        .values_list("exclusion_reason")
        .annotate(n=Count("pk"))
    )
    return ProjectFunnel(
        imported=totals["imported"],
        waiting_prefilter=totals["waiting_prefilter"],
        excluded=totals["excluded"],
        excluded_by_reason=dict(sorted(reasons, key=lambda r: (-r[1], r[0]))),
        eligible=totals["imported"] - totals["waiting_prefilter"] - totals["excluded"],
        with_questions=totals["with_questions"],
        no_questions=totals["no_questions"],
    )


def project_screen_list(*, project: Project, state: str | None = None) -> QuerySet[Screen]:
    """Screens of ``project`` (optionally in one state), by RICO id, with their app and question count."""
    qs = Screen.objects.filter(project=project).select_related("app")
    if state:
        qs = qs.filter(state=state)
    return qs.annotate(question_count=Count("questions")).order_by("rico_id")

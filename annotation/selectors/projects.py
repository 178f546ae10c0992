"""Reads of projects for the site's home and project pages: who sees what, and their screens."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Membership, Project, Question, Screen, ScreenState


def _count_subquery(qs: QuerySet[Any], *, group_by: str) -> Coalesce:
    counted = qs.order_by().values(group_by).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def project_list_for_user(*, user: Any) -> list[Project]:
    """The projects ``user`` may open (members: theirs; site admins: all), in one query.

    Each project carries ``role`` (``"lead"``, ``"annotator"`` or ``"admin"`` for a site
    admin without membership), ``guidelines_unseen`` (a member not yet shown them),
    ``screen_count``, ``eligible_count`` and ``question_count``.
    Counts come from correlated subqueries so that joins do not multiply them.
    """
    if not getattr(user, "is_authenticated", False):
        return []
    qs = Project.objects.all()
    if not user.is_superuser:
        qs = qs.filter(memberships__user=user)
    role = Membership.objects.filter(project=OuterRef("pk"), user=user).values("role")[:1]
    unseen = Membership.objects.filter(project=OuterRef("pk"), user=user, guidelines_seen_at__isnull=True)
    screens = Screen.objects.filter(project=OuterRef("pk"))
    eligible = screens.exclude(state__in=[ScreenState.PREFILTER, ScreenState.EXCLUDED])
    questions = Question.objects.filter(screen__project=OuterRef("pk"))
    projects: list[Project] = list(
        qs.annotate(
            member_role=Subquery(role),
            guidelines_unseen=Exists(unseen),
            screen_count=_count_subquery(screens, group_by="project"),
            eligible_count=_count_subquery(eligible, group_by="project"),
            question_count=_count_subquery(questions, group_by="screen__project"),
        ).order_by("name", "slug")
    )
    for project in projects:
        project.role = project.member_role or "admin"  # type: ignore[attr-defined]
    return projects


def project_screen_list(*, project: Project, state: str | None = None) -> QuerySet[Screen]:
    """Screens of ``project`` (optionally in one state), by RICO id, with their app and question count:
    a queryset the caller paginates. The question count is a correlated subquery, so only the screens of
    a page are counted (a join grouped by screen counted every screen of the project, and grouped by
    every column, the view hierarchy included); the view hierarchy is not loaded."""
    qs = Screen.objects.filter(project=project).select_related("app")
    if state:
        qs = qs.filter(state=state)
    questions = Question.objects.filter(screen=OuterRef("pk"))
    return (
        qs.only("pk", "rico_id", "state", "split", "exclusion_reason", "app__package")
        .annotate(question_count=_count_subquery(questions, group_by="screen"))
        .order_by("rico_id")
    )

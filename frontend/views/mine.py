"""An annotator's "My work" page: their history, standings, feedback and figures
(``pipeline.quality.mine``; the JSON twin is ``pipeline.apis.mine``).

Who may use it: any logged-in member of the project (any role) and site admins, for their own
work only (nothing in the URL names a user). Anonymous visitors are sent to the login page,
users who are not members get 404.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.exceptions import ApplicationError
from annotation.permissions import member_get, project_get_for_member
from pipeline.engine import stage_filter
from pipeline.quality.mine import (
    feedback_by_stage,
    my_work_figures,
    my_work_history,
    standing_views,
)
from pipeline.stages.registry import stages

from .core import domain_errors_as_http


@login_required
@require_GET
@domain_errors_as_http
def my_work(request: HttpRequest, slug: str) -> HttpResponse:
    """``?stage=``: only that stage's history (an unknown stage is a 400 naming the stages)."""
    project = project_get_for_member(user=request.user, slug=slug)
    error = None
    try:
        stage = stage_filter(request.GET.get("stage"))
    except ApplicationError as exc:
        stage, error = None, exc.message
    membership = member_get(project=project, user=request.user)
    views = standing_views(project=project, user=request.user, membership=membership)
    history = my_work_history(project=project, user=request.user, stage=stage)
    context = {
        "project": project,
        "stage": stage,
        "stages": stages(),
        "error": error,
        "standings": [v for v in views.values() if v.status],
        "figures": my_work_figures(project=project, user=request.user),
        "history": history,
        "feedback": [f for f in feedback_by_stage(project=project, user=request.user) if stage in (None, f[0].name)],
    }
    return render(request, "frontend/workspace/my_work.html", context, status=400 if error else 200)

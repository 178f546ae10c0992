"""Site pages: home, project, screen, and the lead's import pages.

Every page needs a login (anonymous visitors are redirected to the login page).
Project pages: members of the project and site admins; others get 404.
Import pages: leads of the project and site admins; annotators get 403.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods

from annotation.exceptions import ApplicationError, NotFoundError, PermissionDeniedError
from annotation.models import ImportJob, Role, ScreenState
from annotation.permissions import member_get, project_get_for_lead, project_get_for_member
from annotation.selectors.assignments import assignment_counts_by_annotator, assignment_held_by_annotator
from annotation.selectors.projects import project_list_for_user, project_screen_list
from annotation.selectors.screens import screen_get, screen_payload
from annotation.services.guidelines import guidelines_mark_seen, guidelines_render, guidelines_unseen
from annotation.services.members import invitations_waiting
from frontend.jobs import job_display
from pipeline.analytics.stored import snapshot_current
from pipeline.ingest.jobs import import_job_create, import_job_list
from pipeline.jobs.lifecycle import job_get_for_lead
from pipeline.stages.prefilter import EXCLUSION_REASONS
from pipeline.stages.registry import stages

SCREENS_PER_PAGE = 50
PEOPLE_PER_PAGE = 50  # the per-annotator drill-down, busiest first
# Funnel chart geometry (SVG user units): label column, bar column, row height.
BAR_WIDTH = 300
# Where the funnel's bars start: the labels end 10 px before, right-aligned, and the longest one
# ("With answered questions", ~165 px at 14 px) must fit (issue 22 §13: it was cut at 130 px).
FUNNEL_BAR_X = 200
BAR_STEP = 32


def domain_errors_as_http(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Pages answer domain refusals like the API does: not found -> 404, not allowed -> 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except NotFoundError as exc:
            raise Http404(exc.message) from exc
        except PermissionDeniedError as exc:
            raise PermissionDenied(exc.message) from exc

    return wrapper


class ImportForm(forms.Form):
    file = forms.FileField(required=False, help_text="A zip of <id>.jpg/.png screenshots with their <id>.json VH.")
    prefix = forms.CharField(
        required=False,
        max_length=1024,
        help_text="…or a folder already in this project's import area (staging/<project>/ in storage), e.g. batch-1.",
    )
    device_size = forms.CharField(
        required=False, max_length=16, help_text="VH device size as WxH; empty: the project's (RICO 1440x2560)."
    )


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The user's projects with their role and counts, and the invitations addressed to their account. Any
    logged-in user (sees only their projects and their invitations)."""
    context = {
        "projects": project_list_for_user(user=request.user),
        "invitations": invitations_waiting(user=request.user),
    }
    return render(request, "frontend/home.html", context)


@require_GET
@login_required
@domain_errors_as_http
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's stage funnel and screens; leads also see the import form, past jobs, the
    answer pool's shortfalls and a per-annotator drill-down. A member's first visit shows the
    guidelines.

    Members of the project and site admins; others 404.
    """
    project = project_get_for_member(user=request.user, slug=slug)
    return _project_page(request, project=project, form=ImportForm())


def _held_now(project: Any, people: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored per-annotator counts with the leases each holds now, read live (one query over the live
    leases); someone holding a lease who had done nothing when the counts were stored is listed too."""
    held = assignment_held_by_annotator(project=project)
    rows = [
        {
            **p,
            "held_by_stage": held.get(p["user_id"], ("", {}))[1],
            "held": sum(held.get(p["user_id"], ("", {}))[1].values()),
        }
        for p in people
    ]
    known = {p["user_id"] for p in people}
    rows += [
        {
            "user_id": uid,
            "username": name,
            "submitted": {},
            "total": 0,
            "skipped": 0,
            "held": sum(by.values()),
            "held_by_stage": by,
        }
        for uid, (name, by) in sorted(held.items(), key=lambda item: item[1][0])
        if uid not in known
    ]
    return rows


def _held_from(people: list[dict[str, Any]]) -> dict[str, int]:
    """Leases held now per stage, summed from the per-annotator counts (saves a query)."""
    held: dict[str, int] = {}
    for person in people:
        for stage, n in person["held_by_stage"].items():
            held[stage] = held.get(stage, 0) + n
    return held


def _guidelines_once(project: Any, membership: Any) -> str:
    """The guidelines as HTML the first time a member sees the project (then remembered), else ""."""
    if not guidelines_unseen(membership=membership):
        return ""
    guidelines_mark_seen(membership=membership)
    return mark_safe(guidelines_render(project=project))  # noqa: S308 -- sanitised by nh3


def _project_page(request: HttpRequest, *, project: Any, form: ImportForm, status: int = 200) -> HttpResponse:
    state = request.GET.get("state") or ""
    if state not in ScreenState.values:
        state = ""
    # The funnel and the per-annotator counts: counted on each view for a small project, else read from
    # the stored snapshot, with the time it was computed (``pipeline.analytics.stored``)
    stored = snapshot_current(project=project, kind="progress")
    progress = stored.figures.progress
    page = Paginator(project_screen_list(project=project, state=state or None), SCREENS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    membership = member_get(project=project, user=request.user)
    is_lead = request.user.is_superuser or (membership is not None and membership.role == Role.LEAD)
    if not is_lead:
        people = []
    elif stored.live:
        people = assignment_counts_by_annotator(project=project)
    else:
        people = _held_now(project, stored.figures.people)
    held = _held_from(people) if is_lead else progress.held
    people_page = Paginator(people, PEOPLE_PER_PAGE).get_page(request.GET.get("people"))
    answers_by_split = progress.answers_by_split
    stage_labels = {name: stage.label for name, stage in stages().items()}
    steps = progress.steps()
    peak = max([step.count for step in steps] + [1])
    context = {
        "project": project,
        "waiting_prefilter": progress.screens[ScreenState.PREFILTER],
        "no_questions": progress.screens[ScreenState.NO_QUESTIONS],
        "excluded": [
            (EXCLUSION_REASONS.get(reason, reason or "(no reason)"), n) for reason, n in progress.excluded.items()
        ],
        "bars": [
            {
                "key": step.key,
                "label": step.label,
                "count": step.count,
                "width": round(BAR_WIDTH * step.count / peak, 1),
                "value_x": round(FUNNEL_BAR_X + 6 + BAR_WIDTH * step.count / peak, 1),
                "y": i * BAR_STEP,
            }
            for i, step in enumerate(steps)
        ],
        "chart_height": len(steps) * BAR_STEP,
        "chart_width": FUNNEL_BAR_X + BAR_WIDTH + 60,
        "label_x": FUNNEL_BAR_X - 10,
        "bar_x": FUNNEL_BAR_X,
        "page": page,
        "state": state,
        "states": ScreenState.choices,
        "is_lead": is_lead,
        "answers_by_split": answers_by_split,
        # only questions waiting for answers can be stuck: no query when none wait
        "stuck": progress.stuck if is_lead and any(row.waiting for row in answers_by_split) else [],
        "held": [(stage_labels.get(name, name), n) for name, n in held.items() if n],
        "stage_columns": list(stage_labels.items()),
        "people": [
            {**person, "counts": [person["submitted"].get(name, 0) for name in stage_labels]}
            for person in people_page.object_list
        ],
        "people_page": people_page,
        "people_query": urlencode({k: v for k, v in (("state", state), ("page", request.GET.get("page", ""))) if v}),
        "counted_at": None if stored.live else stored.computed_at,
        "recounting": stored.refreshing,
        "guidelines_once": _guidelines_once(project, membership) if request.method == "GET" else "",
        "form": form if is_lead else None,
        "jobs": import_job_list(project=project) if is_lead else [],
        "max_upload_mb": settings.SCREENQA_IMPORT["MAX_UPLOAD_BYTES"] // (1024 * 1024),
    }
    return render(request, "frontend/project.html", context, status=status)


@require_GET
@login_required
@domain_errors_as_http
def screen_detail(request: HttpRequest, slug: str, rico_id: str) -> HttpResponse:
    """One screen: its pre-filter overlay and its candidates. Members of the project and site admins; others 404."""
    project = project_get_for_member(user=request.user, slug=slug)
    screen = screen_get(project=project, rico_id=rico_id)
    return render(
        request,
        "frontend/screen.html",
        {"project": project, "screen": screen, "payload": screen_payload(screen=screen)},
    )


@require_http_methods(["POST"])
@login_required
@domain_errors_as_http
def import_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an import (form on the project page). Leads of the project and site admins; annotators 403.

    On bad input the project page is shown again with the errors and the typed values.
    """
    project = project_get_for_lead(user=request.user, slug=slug)
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            job = import_job_create(
                project=project,
                user=request.user,
                upload=form.cleaned_data["file"],
                prefix=form.cleaned_data["prefix"],
                device_size=form.cleaned_data["device_size"],
            )
        except ApplicationError as exc:
            field = exc.field if exc.field in form.fields else None
            form.add_error(field, exc.message)
        else:
            return HttpResponseRedirect(reverse("frontend:import-job", kwargs={"job_id": job.pk}))
    return _project_page(request, project=project, form=form, status=400)


@require_GET
@login_required
@domain_errors_as_http
def import_job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    """An import job's progress, then its summary. Leads of the project and site admins; annotators 403.

    With htmx the progress block polls ``frontend.views.jobs.job_progress`` every second while the job runs.
    """
    job = job_get_for_lead(model=ImportJob, user=request.user, job_id=job_id)
    return render(request, "frontend/import_job.html", {"job": job, "project": job.project, "d": job_display(job)})

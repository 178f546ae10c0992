"""The lead's quality pages (docs/quality.md, "Leads"): every annotator of a project with their
quality figures and the actions on their standing, one annotator's control accuracy over time
(an SVG chart drawn on the server) with the items behind each point and their quality events,
and the project's gold items.

Who may use them: leads of the project and site admins. Other members get 403, users who are
not members 404, anonymous visitors are sent to the login page.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotation.exceptions import ApplicationError, ConflictError
from annotation.models import AssistJob, Project, Stage
from annotation.permissions import project_get_for_lead
from frontend.jobs import job_display
from pipeline.assist.report import assist_annotator_figures, assist_backend_figures
from pipeline.assist.service import assist_refill_for_lead
from pipeline.engine import stages
from pipeline.quality.figures import (
    figures_with_standings,
    quality_figures_current,
    quality_figures_rows,
    quality_figures_start,
)
from pipeline.quality.gold import gold_balance, gold_promotable, gold_promote, gold_set_active
from pipeline.quality.report import (
    SORT_KEYS,
    AccuracyPoint,
    control_timeline,
    gold_stat_rows,
    gold_stats_of,
    member_get_for_report,
    quality_events,
    quality_report,
    rule_label,
)
from pipeline.quality.standing import standing_act
from pipeline.quality.writers import faulted_questions
from pipeline.stages.base import qualification_mode

from .postprocess import lead_page

# Chart geometry (SVG user units): the plot area and its margins.
CHART_WIDTH = 600
CHART_HEIGHT = 200
CHART_LEFT = 40
CHART_TOP = 10
CHART_BOTTOM = 30
EVENTS_SHOWN = 200
QUALITY_ROWS_PER_PAGE = 50
GOLD_ROWS_PER_PAGE = 50
# The quality page's columns, each sortable (``pipeline.quality.report.SORT_KEYS``).
COLUMNS = (
    ("username", "Annotator"),
    ("status", "Standing"),
    ("qualification", "Qualification"),
    ("control", "Control accuracy"),
    ("agreement", "Agreement"),
    ("accepted", "Accepted"),
    ("rejected", "Rejected"),
    ("invalid", "Invalid questions"),
    ("median", "Median s/item"),
    ("submitted", "Submitted"),
    ("skips", "Skips"),
)
assert {key for key, _ in COLUMNS} == set(SORT_KEYS)


def _stage_choices() -> list[tuple[str, str]]:
    return [(name, stage.label) for name, stage in stages().items()]


def _requalifiable() -> set[str]:
    return {name for name, stage in stages().items() if qualification_mode(stage)}


def _error(request: HttpRequest, project: Project, message: str) -> HttpResponse:
    return render(request, "frontend/quality/error.html", {"project": project, "error": message}, status=400)


@require_GET
@lead_page
def quality_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Every member with their quality figures, as the ``quality-figures`` job last computed them (the
    time shown; refreshed when old, ``pipeline.quality.figures``), sortable (``?sort=``, ``-`` for
    descending), searchable by name (``?q=``), paginated (``?page=``), optionally in one stage
    (``?stage=``), with pause / reinstate / requalify per stage (standings read live). Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    stage = request.GET.get("stage", "")
    sort = request.GET.get("sort") or "username"
    search = request.GET.get("q", "").strip()[:150]
    try:
        found = quality_figures_rows(project=project, stage=stage, sort=sort, search=search)
    except ApplicationError as exc:
        return _error(request, project, exc.message)
    state = quality_figures_current(project=project)
    page = Paginator(found, QUALITY_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    rows = figures_with_standings(project=project, rows=list(page.object_list), stage=stage)

    def query(**changed: str) -> str:
        return urlencode({k: v for k, v in {"stage": stage, "q": search, "sort": sort, **changed}.items() if v})

    heads = [
        {
            "key": key,
            "label": label,
            "query": query(sort="-" + key if sort == key else key),
            "sorted": "asc" if sort == key else "desc" if sort == "-" + key else "",
        }
        for key, label in COLUMNS
    ]
    context = {
        "project": project,
        "rows": rows,
        "page": page,
        "page_query": query(),
        "heads": heads,
        "stage": stage,
        "sort": sort,
        "search": search,
        "computed_at": state.computed_at,
        "refreshing": state.refreshing,
        "stage_choices": _stage_choices(),
        "requalifiable": _requalifiable(),
        "next": request.get_full_path(),
        "assist": assist_backend_figures(project=project) if project.assist_url else None,
        "assist_job": _last_suggestions_job(project) if project.assist_url else None,
    }
    return render(request, "frontend/quality/project.html", context)


def _last_suggestions_job(project: Project) -> dict[str, Any] | None:
    """The project's latest ``suggestions`` job with what its progress block shows (None: never ran)."""
    job = AssistJob.objects.filter(project=project).select_related("created_by").order_by("-pk").first()
    if job is None:
        return None
    job.project = project  # the page's own: no second read of it
    return {"job": job, "d": job_display(job)}


@require_POST
@lead_page
def suggestions_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Compute the suggestions the queues' next questions and screens and the control items lack, in the background
    (the ``suggestions`` job; the API's ``POST /api/projects/<slug>/assist/refill/``), back to the quality
    page's card of the backend, where its progress shows. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    back = reverse("frontend:quality", kwargs={"slug": project.slug}) + "#assist-backend"
    try:
        job = assist_refill_for_lead(project=project, user=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return HttpResponseRedirect(back)
    if job is None:
        messages.info(
            request,
            "Nothing to compute: the next questions and screens of the queues and the control items have suggestions, "
            "or a suggestions job is running already.",
        )
    else:
        messages.success(request, f"Suggestions job #{job.pk} queued: its progress shows below.")
    return HttpResponseRedirect(back)


@require_POST
@lead_page
def quality_refresh(request: HttpRequest, slug: str) -> HttpResponse:
    """Compute the quality figures again, in the background (the ``quality-figures`` job). Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    quality_figures_start(project=project, user=request.user)
    messages.success(request, "The figures are being computed again; reload the page in a moment.")
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = reverse("frontend:quality", kwargs={"slug": project.slug})
    return HttpResponseRedirect(next_url)


@require_POST
@lead_page
def standing_action(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """Pause, reinstate or requalify a member in a stage (form fields ``stage``, ``action``,
    ``note``), then back to ``next``. Leads only; a bad action or stage is a 400."""
    project = project_get_for_lead(user=request.user, slug=slug)
    stage = request.POST.get("stage", "")
    action = request.POST.get("action", "")
    if stage not in stages():
        return _error(request, project, f"Unknown stage {stage!r}.")
    try:
        standing = standing_act(
            project=project,
            user_id=user_id,
            stage=stage,
            action=action,
            actor=request.user,
            note=request.POST.get("note", "").strip(),
        )
    except ConflictError as exc:
        messages.warning(request, exc.message)
    except ApplicationError as exc:
        if exc.__class__ is not ApplicationError:
            raise  # not found / not allowed: the page's 404 / 403
        return _error(request, project, exc.message)
    else:
        done = {"pause": "paused", "reinstate": "reinstated", "requalify": "sent back to qualification"}[action]
        said = f"{standing.user.username} {done} in {stages()[stage].label}."
        if action == "reinstate":  # what the overturned decision had withdrawn, and what came back
            said += _restored_words(quality_events(project=project, user_id=user_id, stage=stage).first())
        messages.success(request, said)
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = reverse("frontend:quality", kwargs={"slug": project.slug})
    return HttpResponseRedirect(next_url)


def _restored_words(event: Any) -> str:
    figures = event.figures if event is not None else {}
    restored, redone, kept_out = (figures.get(k, 0) for k in ("restored", "redone", "kept_out"))
    if not (restored or redone or kept_out):
        return ""
    words = f" {restored} withdrawn item(s) came back"
    if redone:
        words += f"; {redone} stay out: others redid them meanwhile"
    if kept_out:
        words += f"; {kept_out} stay out: their screen or question left the release"
    return words + "."


def _chart(points: list[AccuracyPoint], threshold: float) -> dict[str, Any]:
    """Control accuracy per point as a line with dots (0 at the bottom, 100% at the top), and the
    project's monitoring threshold as a dashed line."""
    n = len(points)
    step = (CHART_WIDTH - CHART_LEFT - 10) / max(n - 1, 1)

    def y(share: float) -> float:
        return round(CHART_TOP + CHART_HEIGHT * (1 - share), 1)

    dots = [
        {
            "x": round(CHART_LEFT + (i * step if n > 1 else (CHART_WIDTH - CHART_LEFT) / 2), 1),
            "y": y(p.accuracy),
            "point": p,
            "anchor": f"point-{i + 1}",
        }
        for i, p in enumerate(points)
    ]
    return {
        "dots": dots,
        "line": " ".join(f"{d['x']},{d['y']}" for d in dots),
        "width": CHART_WIDTH,
        "height": CHART_TOP + CHART_HEIGHT + CHART_BOTTOM,
        "left": CHART_LEFT,
        "right": CHART_WIDTH,
        "top": CHART_TOP,
        "bottom": CHART_TOP + CHART_HEIGHT,
        "mid": y(0.5),
        "threshold_y": y(threshold),
        "threshold": threshold,
        "label_y": CHART_TOP + CHART_HEIGHT + 18,
    }


@require_GET
@lead_page
def annotator_page(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """One member's figures and standings, control accuracy over time (per day, or ``?per=N``
    control items) with the items behind each point, and their quality events. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    member = member_get_for_report(project=project, user_id=user_id)
    stage = request.GET.get("stage", "")
    per_raw = request.GET.get("per", "")
    try:
        per = int(per_raw) if per_raw else None
        rows = quality_report(project=project, stage=stage, user_id=user_id)
        points = control_timeline(project=project, user_id=user_id, stage=stage, per=per)
        events = list(quality_events(project=project, user_id=user_id, stage=stage)[:EVENTS_SHOWN])
        faulted = faulted_questions(project=project, author_id=user_id, stage=stage)
        reasons = stages()[Stage.QUESTIONS_2].review_reasons  # the stage whose writers flag
    except ValueError:
        return _error(request, project, "per is a number of control items.")
    except ApplicationError as exc:
        return _error(request, project, exc.message)
    context = {
        "project": project,
        "member": member,
        "row": rows[0],
        "stage": stage,
        "per": per_raw,
        "stage_choices": _stage_choices(),
        "requalifiable": _requalifiable(),
        "chart": _chart(points, project.monitoring_threshold),
        "points": points,
        # the questions behind "invalid questions", a flag in the words of the writing rules
        "faulted": [
            {"question": q, "judged": q.judged, "flag": reasons.get(q.flag_reason, q.flag_reason)}  # type: ignore[attr-defined]
            for q in faulted
        ],
        # figures as pairs: a dict key like "items" would shadow ``.items`` in the template
        "events": [{"event": e, "rule_label": rule_label(e.rule), "figures": list(e.figures.items())} for e in events],
        "next": request.get_full_path(),
        # model assistance (docs/assist.md): what they do with suggestions
        "assist": assist_annotator_figures(project=project, user_id=user_id),
    }
    return render(request, "frontend/quality/annotator.html", context)


@require_GET
@lead_page
def gold_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's gold items (``?stage=``), a page at a time (``?page=``), with how often each was
    served (``exposures``, and retired past ``gold_exposures_max``) and answered right,
    activate/deactivate, the newest accepted submissions to promote to gold with one click (or any
    by its id), and the servable gold of each class of answers, with a warning where a constant answer
    would pass every qualification set (``gold_balance``). Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    stage = request.GET.get("stage", "")
    try:
        found = gold_stat_rows(project=project, stage=stage)
        promotable = gold_promotable(project=project, stage=stage or None)
    except ApplicationError as exc:
        return _error(request, project, exc.message)
    page = Paginator(found, GOLD_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "project": project,
        "items": gold_stats_of(page.object_list),
        "page": page,
        "page_query": urlencode({"stage": stage} if stage else {}),
        "promotable": promotable,
        "exposures_max": project.gold_exposures_max,
        "stage": stage,
        "stage_choices": [(n, s.label) for n, s in stages().items() if s.has_gold],
        "next": request.get_full_path(),
        # servable gold per class of answers, and the constant answers that would pass a qualification set
        "balance": [b for b in gold_balance(project=project) if not stage or b.stage == stage],
    }
    return render(request, "frontend/quality/gold.html", context)


def _back_to_gold(request: HttpRequest, project: Project) -> HttpResponse:
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = reverse("frontend:quality-gold", kwargs={"slug": project.slug})
    return HttpResponseRedirect(next_url)


@require_POST
@lead_page
def gold_active(request: HttpRequest, slug: str, gold_id: int) -> HttpResponse:
    """Activate (``active=1``) or deactivate (``active=0``) a gold item. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    active = request.POST.get("active", "")
    if active not in ("0", "1"):
        return _error(request, project, "active is 0 or 1.")
    gold = gold_set_active(project=project, gold_id=gold_id, active=active == "1")
    messages.success(request, f"Gold item #{gold.pk} {'activated' if gold.active else 'deactivated'}.")
    return _back_to_gold(request, project)


@require_POST
@lead_page
def gold_promote_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Make a submission gold (``assignment_id``), its answer as submitted or the edited JSON
    ``answer``. Leads only; a bad id or answer is a 400 saying why."""
    project = project_get_for_lead(user=request.user, slug=slug)
    raw_id = request.POST.get("assignment_id", "").strip()
    raw_answer = request.POST.get("answer", "").strip()
    if not raw_id.isdigit():
        return _error(request, project, "The assignment id is a whole number.")
    try:
        answer = json.loads(raw_answer) if raw_answer else None
    except json.JSONDecodeError as exc:
        return _error(request, project, f"The answer is not valid JSON: {exc.msg} (line {exc.lineno}).")
    if answer is not None and not isinstance(answer, dict):
        return _error(request, project, "The answer is a JSON object, like the stage's submit body.")
    try:
        gold = gold_promote(project=project, assignment_id=int(raw_id), user=request.user, answer=answer)
    except ApplicationError as exc:
        return _error(request, project, exc.message)
    messages.success(request, f"Assignment #{raw_id} is now gold item #{gold.pk} ({gold.stage}).")
    return _back_to_gold(request, project)

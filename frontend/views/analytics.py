"""The lead's analysis page: the ScreenQA papers' figures for one project, as inline SVG charts
drawn on the server (no chart library) with the numbers alongside.

Who may use it: leads of the project and site admins. Annotators get 403, users who are not
members 404, anonymous visitors are sent to the login page.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.permissions import project_get_for_lead
from pipeline.analytics.figures import AnnotatorActivity, Histogram
from pipeline.analytics.stored import snapshot_current, snapshot_start
from pipeline.engine import stages

from .core import domain_errors_as_http

# Chart geometry, in SVG user units.
FUNNEL_LABEL_X = 190  # right edge of the step labels
FUNNEL_BAR_X = 200
FUNNEL_BAR_WIDTH = 300
FUNNEL_STEP = 30
HIST_HEIGHT = 150  # plot area; labels above and below add HIST_PAD each
HIST_PAD = 20
HIST_COLUMN = 40
SPARK_WIDTH = 120
SPARK_HEIGHT = 24
SPARK_MAX_STEP = 14  # a day's width at most: a few days stay thin bars, not blocks

ANNOTATORS_PER_PAGE = 50


def _funnel(steps: list[Any]) -> dict[str, Any]:
    peak = max([s.count for s in steps] + [1])
    bars = []
    for i, step in enumerate(steps):
        width = round(FUNNEL_BAR_WIDTH * step.count / peak, 1)
        bars.append(
            {
                "key": step.key,
                "label": step.label,
                "count": step.count,
                "y": i * FUNNEL_STEP,
                "width": width,
                "value_x": round(FUNNEL_BAR_X + width + 6, 1),
            }
        )
    return {"bars": bars, "height": len(steps) * FUNNEL_STEP, "label_x": FUNNEL_LABEL_X, "bar_x": FUNNEL_BAR_X}


def _columns(hist: Histogram) -> dict[str, Any]:
    """A vertical bar chart of ``hist``: the count above each column, the bin label below."""
    peak = max([b.count for b in hist.bins] + [1])
    columns = []
    for i, b in enumerate(hist.bins):
        h = round(HIST_HEIGHT * b.count / peak, 1)
        x = i * HIST_COLUMN
        columns.append(
            {
                "label": b.label,
                "count": b.count,
                "share": b.share,
                "x": x + 4,
                "width": HIST_COLUMN - 8,
                "y": round(HIST_PAD + HIST_HEIGHT - h, 1),
                "height": h,
                "mid": x + HIST_COLUMN // 2,
                "value_y": round(HIST_PAD + HIST_HEIGHT - h - 5, 1),
            }
        )
    return {
        "columns": columns,
        "width": len(columns) * HIST_COLUMN,
        "height": HIST_HEIGHT + 2 * HIST_PAD,
        "axis_y": HIST_PAD + HIST_HEIGHT,
        "label_y": HIST_PAD + HIST_HEIGHT + 15,
        "total": hist.total,
    }


def _stack(parts: list[tuple[str, str, float]]) -> list[dict[str, Any]]:
    """Segments of a 100% stacked bar (x and width in percent of the bar)."""
    x = 0.0
    segments = []
    for key, label, share in parts:
        segments.append(
            {"key": key, "label": label, "share": share, "x": round(100 * x, 2), "width": round(100 * share, 2)}
        )
        x += share
    return segments


def _sparkline(activity: AnnotatorActivity) -> dict[str, Any]:
    """Submissions per day as bars, kept share per day (0..1) as a line over the same days."""
    days = activity.days
    n = max(len(days), 1)
    step = min(SPARK_WIDTH / n, SPARK_MAX_STEP)
    peak = max([d.submissions for d in days] + [1])
    bars, points = [], []
    for i, d in enumerate(days):
        h = round((SPARK_HEIGHT - 2) * d.submissions / peak, 1)
        bars.append(
            {
                "x": round(i * step + 1, 1),
                "y": round(SPARK_HEIGHT - h, 1),
                "width": round(max(step - 2, 1), 1),
                "height": h,
                "day": d,
            }
        )
        if d.kept_share is not None:
            points.append((round(i * step + step / 2, 1), round(1 + (SPARK_HEIGHT - 2) * (1 - d.kept_share), 1)))
    return {
        "bars": bars,
        "points": " ".join(f"{x},{y}" for x, y in points),
        "dots": points,
        "width": SPARK_WIDTH,
        "height": SPARK_HEIGHT,
    }


@require_GET
@login_required
@domain_errors_as_http
def project_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """The analysis page. Leads of the project and site admins; annotators 403, non-members 404."""
    project = project_get_for_lead(user=request.user, slug=slug)
    stored = snapshot_current(project=project, kind="analysis")
    data = stored.figures
    sources = data.answer_elements.sources
    agreement = data.agreement
    stage_columns = [(name, stage.short_label) for name, stage in stages().items()]
    # A page of annotators (``?page=``): at ScreenQA size a thousand rows with a chart each would be megabytes.
    page = Paginator(data.annotators, ANNOTATORS_PER_PAGE).get_page(request.GET.get("page"))
    annotators = [
        {
            "activity": a,
            "per_stage": [a.submitted.get(value, 0) for value, _ in stage_columns],
            "spark": _sparkline(a),
        }
        for a in page.object_list
    ]
    context = {
        "project": project,
        "data": data,
        "computed_at": stored.computed_at,
        "refreshing": stored.refreshing,
        "funnel": _funnel(data.funnel.steps()),
        "questions_chart": _columns(data.questions_per_screen),
        "boxes_chart": _columns(data.answer_elements.boxes_per_answer),
        "sources": sources,
        "source_rows": [
            ("vh_only", "VH leaves only", sources.vh_only, sources.shares["vh_only"], sources.paper["vh_only"]),
            (
                "drawn_only",
                "Drawn boxes only",
                sources.drawn_only,
                sources.shares["drawn_only"],
                sources.paper["drawn_only"],
            ),
            ("mixed", "A mix of both", sources.mixed, sources.shares["mixed"], sources.paper["mixed"]),
        ],
        "sources_ours": _stack(
            [
                (k, label, sources.shares[k])
                for k, label in (("vh_only", "VH only"), ("drawn_only", "drawn only"), ("mixed", "mixed"))
            ]
        ),
        "sources_paper": _stack(
            [
                (k, label, sources.paper[k])
                for k, label in (("vh_only", "VH only"), ("drawn_only", "drawn only"), ("mixed", "mixed"))
            ]
        ),
        "category_peak": max([r.share for r in data.categories.rows] + [0.01]),
        "agreement": agreement,
        "agreement_stack": _stack(
            [
                ("all", "all agree", agreement.shares["all"]),
                ("two", "two agree", agreement.shares["two"]),
                ("none", "none agree", agreement.shares["none"]),
            ]
        ),
        "stage_columns": stage_columns,
        "annotators": annotators,
        "annotators_page": page,
    }
    return render(request, "frontend/analytics/analysis.html", context)


@require_POST
@login_required
@domain_errors_as_http
def analysis_refresh_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Compute the analysis figures again, in the background (the ``analysis-figures`` job), then back to
    the analysis page. Leads of the project and site admins; annotators 403, non-members 404."""
    project = project_get_for_lead(user=request.user, slug=slug)
    snapshot_start(project=project, kind="analysis", user=request.user)
    messages.success(request, "The figures are being computed again; reload the page in a moment.")
    return HttpResponseRedirect(reverse("frontend:analysis", kwargs={"slug": project.slug}))

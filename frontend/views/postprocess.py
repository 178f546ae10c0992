"""The lead's post-processing pages: start jobs and follow them (``frontend.views.jobs``), the results
(agreement shares, counts by reason), the dropped questions and answers, and the short-answer review sample.

Who may use them: leads of the project and site admins. Annotators of the project get 403,
users who are not members 404, anonymous visitors are sent to the login page.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import ReleaseJob, Split
from annotation.permissions import project_get_for_lead
from annotation.selectors.screens import screen_image_url
from frontend.jobs import job_display
from pipeline.decisions.decide import ANSWER_REASONS, QUESTION_REASONS
from pipeline.decisions.selectors import decision_payload, postprocess_decisions, postprocess_summary
from pipeline.jobs.lifecycle import ACTIVE
from pipeline.release.postprocess import release_job_latest, release_job_start
from pipeline.release.short_answers.service import SAMPLE_MAX, question_short_answers_update, short_answers_sample

from .core import domain_errors_as_http

DECISIONS_PER_PAGE = 50
DEFAULT_SAMPLE = 20
AGREEMENT_LABELS = (("all", "All agree"), ("two", "Two agree"), ("none", "None agree"))


def lead_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    return login_required(domain_errors_as_http(view))


def _agreement_bars(counts: dict[str, int], shares: dict[str, float]) -> list[dict[str, Any]]:
    return [
        {
            "key": key,
            "label": label,
            "count": counts.get(key, 0),
            "percent": round(100 * shares.get(key, 0.0), 1),
        }
        for key, label in AGREEMENT_LABELS
    ]


@require_GET
@lead_page
def postprocess_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Start post-processing and short answers, follow the jobs, read the results. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    summary = postprocess_summary(project=project)
    splits = [
        {
            "name": name,
            **entry,
            "dropped_total": sum(entry["dropped"].values()),
            "bars": _agreement_bars(entry["agreement"], entry["agreement_shares"]),
            "has_agreement": any(entry["agreement"].values()),
        }
        for name, entry in summary["splits"].items()
    ]
    jobs = [
        release_job_latest(project=project, kind=ReleaseJob.Kind.POSTPROCESS),
        release_job_latest(project=project, kind=ReleaseJob.Kind.SHORT_ANSWERS),
    ]
    context = {
        "project": project,
        "summary": summary,
        "splits": splits,
        "overall_bars": _agreement_bars(summary["agreement"], summary["agreement_shares"]),
        "postprocess_job": job_display(jobs[0]) if jobs[0] else None,
        "short_answers_job": job_display(jobs[1]) if jobs[1] else None,
        "any_active": any(job is not None and job.status in ACTIVE for job in jobs),
        "question_reasons": QUESTION_REASONS,
        "answer_reasons": ANSWER_REASONS,
    }
    return render(request, "frontend/release/postprocess_page.html", context)


@require_POST
@lead_page
def postprocess_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a post-processing or short-answer job (form field ``kind``), back to the page. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    kind = request.POST.get("kind", ReleaseJob.Kind.POSTPROCESS)
    try:
        job = release_job_start(project=project, kind=kind, user=request.user)
    except ConflictError as exc:
        messages.warning(request, exc.message)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Job #{job.pk} ({job.kind}) queued.")
    return HttpResponseRedirect(reverse("frontend:postprocess", kwargs={"slug": project.slug}))


@require_GET
@lead_page
def postprocess_decisions_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Dropped questions or answers with their reasons, filterable by kind, reason and split. Leads only."""
    project = project_get_for_lead(user=request.user, slug=slug)
    filters = {
        "kind": request.GET.get("kind") or "question",
        "reason": request.GET.get("reason", ""),
        "split": request.GET.get("split", ""),
    }
    try:
        decisions = postprocess_decisions(project=project, **filters)
    except ApplicationError as exc:
        context = {"project": project, "filters": filters, "error": exc.message, "page": None}
        return render(request, "frontend/release/postprocess_decisions.html", _filters_context(context), status=400)
    page = Paginator(decisions, DECISIONS_PER_PAGE).get_page(request.GET.get("page"))
    query = urlencode({k: v for k, v in filters.items() if v})
    context = {
        "project": project,
        "filters": filters,
        "page": page,
        "rows": [decision_payload(obj) for obj in page.object_list],
        "query": query,
    }
    return render(request, "frontend/release/postprocess_decisions.html", _filters_context(context))


def _filters_context(context: dict[str, Any]) -> dict[str, Any]:
    reasons = ANSWER_REASONS if context["filters"]["kind"] == "answer" else QUESTION_REASONS
    return {**context, "reasons": reasons, "split_choices": Split.values}


def _sample_item(question: Any) -> dict[str, Any]:
    screen = question.screen
    answers = list(question.answers.all())
    return {
        "question": question,
        "screen": screen,
        "image_url": screen_image_url(screen=screen),
        "answers": [
            {
                "answer": answer,
                "elements": [
                    {"element": e, "n": n, "width": e.right - e.left, "height": e.bottom - e.top}
                    for n, e in enumerate(answer.elements.all(), start=1)
                ],
            }
            for answer in answers
        ],
        "short_answers_text": "\n".join(question.short_answers),
    }


@require_GET
@lead_page
def short_answers_review(request: HttpRequest, slug: str) -> HttpResponse:
    """A seeded random sample of kept questions with editable short answers. Leads only.

    Without a seed, a fresh one is drawn and the page redirects to it, so the URL names the sample.
    """
    project = project_get_for_lead(user=request.user, slug=slug)
    seed = request.GET.get("seed", "")
    size_raw = request.GET.get("size") or str(DEFAULT_SAMPLE)
    if not seed:
        query = urlencode({"size": size_raw, "seed": secrets.token_hex(4)})
        return HttpResponseRedirect(f"{reverse('frontend:short-answers-review', kwargs={'slug': slug})}?{query}")
    context: dict[str, Any] = {"project": project, "seed": seed, "size": size_raw, "sample_max": SAMPLE_MAX}
    try:
        size = int(size_raw)
        items = [_sample_item(q) for q in short_answers_sample(project=project, size=size, seed=seed)]
    except ValueError:
        context["error"] = "Sample size must be a whole number."
        return render(request, "frontend/release/short_answers_review.html", context, status=400)
    except ApplicationError as exc:
        context["error"] = exc.message
        return render(request, "frontend/release/short_answers_review.html", context, status=400)
    context["items"] = items
    context["next"] = request.get_full_path()
    return render(request, "frontend/release/short_answers_review.html", context)


@require_POST
@lead_page
def short_answers_save(request: HttpRequest, slug: str, question_id: int) -> HttpResponse:
    """Save a lead's short answers for one question (one per line). Leads only.

    htmx: answers with the question's editor block (400 with the error and the typed text kept).
    Without JavaScript: back to the review page (``next``), or the page with the error.
    """
    project = project_get_for_lead(user=request.user, slug=slug)
    text = request.POST.get("short_answers", "")
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = reverse("frontend:short-answers-review", kwargs={"slug": slug})
    try:
        question = question_short_answers_update(
            project=project, question_id=question_id, answers=text.splitlines(), user=request.user
        )
    except ApplicationError as exc:
        if isinstance(exc, NotFoundError):
            raise
        if not request.headers.get("HX-Request"):
            messages.error(request, f"Question {question_id}: {exc.message}")
            return HttpResponseRedirect(next_url)
        context = {"project": project, "question_id": question_id, "text": text, "error": exc.message}
        context["next"] = next_url
        return render(request, "frontend/release/short_answers_editor.html", context, status=400)
    if not request.headers.get("HX-Request"):
        messages.success(request, f"Short answers of question {question_id} saved.")
        return HttpResponseRedirect(next_url)
    context = {
        "project": project,
        "question_id": question.pk,
        "text": "\n".join(question.short_answers),
        "question": question,
        "saved": True,
        "next": next_url,
    }
    return render(request, "frontend/release/short_answers_editor.html", context)

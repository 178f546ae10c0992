"""Every kind of job on the lead's pages: the one view that serves a job's progress block
(``frontend/jobs/_progress.html``, described by ``frontend.jobs.job_display``) to htmx polls, and the
one "Run again" action.

Who may use them: leads of the job's project and site admins. Annotators of the project get 403, users
who are not members 404, anonymous visitors are sent to the login page.

The routes of each table (``/imports/<id>/...``, ``/release-jobs/<id>/...``) name the table in their
``model`` argument (``frontend/urls.py``); the pages that show a job (import, export, post-processing)
include the block with ``job_display(job)``.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from annotation.exceptions import ConflictError
from annotation.models import Job
from frontend.jobs import KIND_TEXT, job_display, job_page_url
from pipeline.jobs.lifecycle import ACTIVE, job_get_for_lead, job_rerun

from .core import domain_errors_as_http


@require_GET
@login_required
@domain_errors_as_http
def job_progress(request: HttpRequest, job_id: int, model: type[Job]) -> HttpResponse:
    """One job's progress block alone (htmx partial, polled every second while the job is queued or running).

    Leads of the job's project and site admins; annotators 403, non-members 404. When a poll finds the job
    ended, the page reloads (``HX-Refresh``) to show what it changed.
    """
    job = job_get_for_lead(model=model, user=request.user, job_id=job_id)
    response = render(request, "frontend/jobs/_progress.html", {"job": job, "d": job_display(job)})
    if request.headers.get("HX-Request") and job.status not in ACTIVE:
        response["HX-Refresh"] = "true"
    return response


@require_POST
@login_required
@domain_errors_as_http
def job_rerun_view(request: HttpRequest, job_id: int, model: type[Job]) -> HttpResponse:
    """Run a failed or stale job again ("Run again" on its progress block), back to the job's page.

    Leads of the job's project and site admins; annotators 403, non-members 404. A job that is done, or
    whose worker is alive, is not run again: the page says why.
    """
    try:
        job = job_rerun(model=model, user=request.user, job_id=job_id)
    except ConflictError as exc:
        messages.warning(request, exc.message)
        job = job_get_for_lead(model=model, user=request.user, job_id=job_id)
    else:
        messages.success(request, f"{KIND_TEXT[job.kind].noun.capitalize()} #{job.pk} queued again.")
    return HttpResponseRedirect(job_page_url(job))

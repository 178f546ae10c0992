"""The lead's export pages: start an export (format choice), follow its progress, download past exports.

Who may use them: leads of the project and site admins. Annotators get 403, users who are
not members 404, anonymous visitors are sent to the login page.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation.permissions import project_get_for_lead
from frontend.jobs import job_display
from pipeline.release.export.jobs import release_export_job_get_for_lead, release_export_jobs, release_export_start
from pipeline.release.export.writers import EXPORT_FORMATS

from .core import domain_errors_as_http


class ExportForm(forms.Form):
    format = forms.ChoiceField(
        choices=[(key, fmt.label) for key, fmt in EXPORT_FORMATS.items()], initial="screenqa", widget=forms.RadioSelect
    )


@require_http_methods(["GET", "POST"])
@login_required
@domain_errors_as_http
def export_list(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the form and the past exports. POST: start an export, then show its progress page."""
    project = project_get_for_lead(user=request.user, slug=slug)
    form = ExportForm(request.POST) if request.method == "POST" else ExportForm()
    if request.method == "POST" and form.is_valid():
        job = release_export_start(project=project, user=request.user, fmt=form.cleaned_data["format"])
        return HttpResponseRedirect(reverse("frontend:export-detail", kwargs={"slug": slug, "job_id": job.pk}))
    return render(
        request,
        "frontend/release/export_list.html",
        {"project": project, "form": form, "jobs": release_export_jobs(project=project)},
        status=400 if form.is_bound else 200,
    )


@require_GET
@login_required
@domain_errors_as_http
def export_detail(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    """One export's progress (htmx polls ``frontend.views.jobs.job_progress`` every second until it ends),
    then its download link and counts."""
    job = release_export_job_get_for_lead(user=request.user, job_id=job_id, slug=slug)
    return render(
        request, "frontend/release/export_detail.html", {"project": job.project, "job": job, "d": job_display(job)}
    )

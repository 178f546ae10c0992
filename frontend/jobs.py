"""How the lead's pages show a job of any kind: ``job_display(job)`` describes one job for the one
progress block (``frontend/jobs/_progress.html``), which the import, export, post-processing, members and
quality (suggestions) pages include and ``frontend.views.jobs.job_progress`` serves to htmx polls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from annotation.models import AssistJob, ImportJob, Job, MemberJob, ReleaseJob
from pipeline.jobs.lifecycle import ACTIVE, job_can_rerun, job_is_stale


@dataclass(frozen=True)
class KindText:
    noun: str  # "The <noun> failed."
    unit: str  # "3 of 12 <unit>"
    failed_hint: str
    rerun_hint: str
    result_template: str  # what a finished job shows


KIND_TEXT = {
    "import": KindText(
        "import",
        "screens",
        "Screens imported before the failure are kept; running it again finishes it.",
        "Screens already imported are skipped.",
        "frontend/jobs/result_import.html",
    ),
    "postprocess": KindText(
        "job",
        "questions",
        "Batches finished before the failure are kept; running it again redoes the rest.",
        "Decisions already written stay; the run decides the rest.",
        "frontend/jobs/result_postprocess.html",
    ),
    "short-answers": KindText(
        "job",
        "questions",
        "Batches finished before the failure are kept; running it again writes the rest.",
        "Questions that have short answers are skipped.",
        "frontend/jobs/result_short_answers.html",
    ),
    "export": KindText(
        "export",
        "questions",
        "No partial files were kept; running it again makes the export from the start.",
        "The export is made again from the start.",
        "frontend/jobs/result_export.html",
    ),
    "members": KindText(
        "account creation",
        "accounts",
        "Accounts created before the failure are kept, with their credentials; running it again creates the rest.",
        "Accounts already created are skipped.",
        "frontend/jobs/result_members.html",
    ),
    "suggestions": KindText(
        "suggestions job",
        "items",
        "Suggestions stored before the failure are kept; running it again asks the backend for the rest.",
        "Questions and screens that have a suggestion already are skipped.",
        "frontend/jobs/result_suggestions.html",
    ),
}
# Each table's progress and re-run routes.
ROUTES: dict[type[Job], tuple[str, str]] = {
    ImportJob: ("frontend:import-job-progress", "frontend:import-job-retry"),
    ReleaseJob: ("frontend:release-job-progress", "frontend:release-job-retry"),
    MemberJob: ("frontend:member-job-progress", "frontend:member-job-retry"),
    AssistJob: ("frontend:assist-job-progress", "frontend:assist-job-retry"),
}
SPLIT_ORDER = ("train", "validation", "test", "total")


@dataclass(frozen=True)
class JobDisplay:
    job: Job
    text: KindText
    active: bool
    stale: bool
    can_rerun: bool
    progress_url: str
    rerun_url: str
    page_url: str
    count_rows: list[tuple[str, Any]]


def job_page_url(job: Job) -> str:
    """The page that shows ``job``: where "Run again" comes back to."""
    if job.kind == "import":
        return reverse("frontend:import-job", kwargs={"job_id": job.pk})
    if job.kind == "members":
        return reverse("frontend:member-job", kwargs={"slug": job.project.slug, "job_id": job.pk})
    if job.kind == "export":
        return reverse("frontend:export-detail", kwargs={"slug": job.project.slug, "job_id": job.pk})
    if job.kind == "suggestions":  # the quality page's card of the suggestion backend
        return reverse("frontend:quality", kwargs={"slug": job.project.slug}) + "#assist-backend"
    return reverse("frontend:postprocess", kwargs={"slug": job.project.slug})


def job_display(job: Job) -> JobDisplay:
    """What the progress block shows of ``job`` (no queries beyond the job and its project)."""
    progress_route, rerun_route = ROUTES[type(job)]
    counts = (job.result or {}).get("counts", {}) if job.kind == "export" else {}
    return JobDisplay(
        job=job,
        text=KIND_TEXT[job.kind],
        active=job.status in ACTIVE,
        stale=job_is_stale(job=job),
        can_rerun=job_can_rerun(job=job),
        progress_url=reverse(progress_route, kwargs={"job_id": job.pk}),
        rerun_url=reverse(rerun_route, kwargs={"job_id": job.pk}),
        page_url=job_page_url(job),
        # an export's counts: splits in pipeline order, the total last (the manifest sorts them by name)
        count_rows=[(split, counts[split]) for split in SPLIT_ORDER if split in counts],
    )

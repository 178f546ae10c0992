"""Background jobs: the state of one lifecycle, shared by every kind of job.

``Job`` is abstract: each family keeps its own table (``ImportJob``: screens imported from the web;
``ReleaseJob``: post-processing, short answers, exports; ``MemberJob``: project accounts created in bulk)
with its own inputs, and the fields below
are the same in both. The lifecycle that moves them (claim under a row lock, heartbeat, finish,
fail, the stale rule, re-run) is ``pipeline.jobs``; these rows only hold its state.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from .projects import Project


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Job(models.Model):
    """One run of background work for a project, reported into this row.

    ``attempts`` counts the claims (see ``pipeline.jobs.lifecycle.job_claim``); every write of a run is
    conditional on it, so a run taken for dead and replaced can no longer write into the row.
    ``heartbeat_at`` is the last sign of life: the job's creation or re-queueing, then its worker's beats.
    """

    Status = JobStatus

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.QUEUED)
    total = models.PositiveIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True, help_text="what the work returned; empty until done")
    error = models.TextField(blank=True, help_text="why the last run failed")
    attempts = models.PositiveIntegerField(default=0, help_text="runs claimed so far")
    heartbeat_at = models.DateTimeField(default=timezone.now, help_text="last sign of life")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # The kind of work (``pipeline.kinds``): a constant per table or a column of it.
    kind: str

    class Meta:
        abstract = True
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(processed__lte=F("total")) | Q(total=0), name="%(class)s_progress")
        ]


class ImportJob(Job):
    """An import of screens started from the web (``pipeline.ingest.jobs``); ``result`` is the importer's summary."""

    kind = "import"

    source = models.CharField(max_length=1024, help_text="storage name of an uploaded zip, or a storage prefix")
    source_kind = models.CharField(max_length=16, choices=[("zip", "zip"), ("prefix", "prefix")])
    device_width = models.PositiveIntegerField(null=True, blank=True)
    device_height = models.PositiveIntegerField(null=True, blank=True)

    class Meta(Job.Meta):
        pass

    @property
    def summary(self) -> dict:
        """The importer's summary (the API's and the pages' name for ``result``)."""
        return self.result


class ReleaseJob(Job):
    """A post-processing, short-answer or export run started by a lead, or a refresh of stored figures
    (quality, analysis, the project page's progress)."""

    class Kind(models.TextChoices):
        POSTPROCESS = "postprocess"
        SHORT_ANSWERS = "short-answers"
        EXPORT = "export"
        QUALITY_FIGURES = "quality-figures"
        ANALYSIS_FIGURES = "analysis-figures"
        PROGRESS_FIGURES = "progress-figures"

    kind = models.CharField(max_length=16, choices=Kind.choices)  # type: ignore[assignment]
    format = models.CharField(max_length=16, blank=True, help_text="export format: screenqa, docvqa, jsonl")
    artifact = models.FileField(upload_to="releases/", max_length=512, blank=True)

    class Meta(Job.Meta):
        pass


class MemberJob(Job):
    """Project accounts created in bulk by a lead (``pipeline.members``): one password hash per account
    takes about half a second, so a CSV of hundreds of names runs here, with progress, not in a request.

    ``request`` is what the lead asked for, validated before the job was queued: ``{"names": [[line, name,
    email], ...], "role", "in_answer_pool"}``. The new passwords wait in ``PendingCredential`` rows for the
    lead's one download (``downloaded_at``)."""

    kind = "members"

    request = models.JSONField(default=dict)
    downloaded_at = models.DateTimeField(null=True, blank=True)

    class Meta(Job.Meta):
        pass

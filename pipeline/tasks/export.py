"""Export tasks: take a job id, run the export service, record the outcome on the job."""

from __future__ import annotations

from celery import shared_task

from pipeline.release.export.jobs import release_export_job_run


@shared_task(name="pipeline.export_release", acks_late=True)
def export_release_task(job_id: int) -> bool:
    """Idempotent (see ``release_export_job_run``); failures are recorded on the job, not retried:
    an export fails on data or disk problems that a retry would not fix."""
    return release_export_job_run(job_id=job_id)

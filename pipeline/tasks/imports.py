"""Import tasks. Thin: they take ids and call one service (``pipeline.ingest.jobs``)."""

from __future__ import annotations

from celery import shared_task

from pipeline.ingest.jobs import import_job_run


@shared_task(name="pipeline.import_job_run", acks_late=True, reject_on_worker_lost=True)
def import_job_run_task(job_id: int) -> None:
    """Run import job ``job_id``. Idempotent (see ``import_job_run``): a redelivery after a
    killed worker finishes the job; a failure is recorded on the job and re-raised."""
    import_job_run(job_id=job_id)

"""Post-processing and short-answer tasks: take a job id, run the service, nothing else.

Both are idempotent (a redelivered message re-runs safely); the services record a failure on
the job before it propagates, so Celery sees it too.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from pipeline.release.postprocess import postprocess_job_run
from pipeline.release.short_answers.service import short_answers_job_run


@shared_task(name="pipeline.postprocess_run", acks_late=True)
def postprocess_run(job_id: int) -> dict[str, Any]:
    return postprocess_job_run(job_id=job_id)


@shared_task(name="pipeline.short_answers_run", acks_late=True)
def short_answers_run(job_id: int) -> dict[str, Any]:
    return short_answers_job_run(job_id=job_id)

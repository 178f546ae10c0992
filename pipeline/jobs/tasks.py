"""The one Celery task: it runs any kind of job. Celery's autodiscovery imports this module.

Thin: it takes a kind and an id and calls ``pipeline.jobs.runner.job_run``. Acknowledged late and rejected
when its worker process dies, so such a message is delivered again; ``job_run`` decides whether the delivery
may run the job (the heartbeat rule), so a duplicate never runs a live job twice. Time limits come from the
settings: at the soft limit the job fails with the reason, at the hard limit Celery kills the process.
"""

from __future__ import annotations

import math

from celery import Task, shared_task
from django.conf import settings

from annotation.models import JobStatus

from .queue import JOB_RUN_TASK
from .runner import job_run

# A delivery that finds its job running elsewhere looks again this many times at most: by then the hard time
# limit has ended the run it watches, one way or another.
WATCH_MAX = math.ceil(settings.SCREENQA_JOB_TIME_LIMIT / settings.SCREENQA_JOB_STALE_SECONDS) + 1


@shared_task(
    bind=True,
    name=JOB_RUN_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.SCREENQA_JOB_SOFT_TIME_LIMIT,
    time_limit=settings.SCREENQA_JOB_TIME_LIMIT,
    max_retries=WATCH_MAX,
)
def job_run_task(self: Task, kind: str, job_id: int) -> None:
    """Run job ``job_id`` of ``kind``. Idempotent; a failure is recorded on the job and raised (not retried:
    jobs fail on data or disk problems that a retry would not fix, and a lead can re-run them).

    A job found running with a live heartbeat belongs to another process, but that process may have died a
    moment ago (a pool process killed: Celery delivers its message again at once, within the stale window).
    Such a delivery looks again once the heartbeat would be stale: it then takes the job over, or finds it
    done and stops.
    """
    job = job_run(kind=kind, job_id=job_id)
    elsewhere = job is not None and job.status == JobStatus.RUNNING
    if elsewhere and not self.request.is_eager and self.request.retries < WATCH_MAX:
        raise self.retry(countdown=settings.SCREENQA_JOB_STALE_SECONDS)

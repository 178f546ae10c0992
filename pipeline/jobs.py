"""Queueing background jobs.

``enqueue`` is the one way the product starts a Celery task. It queues after the
current transaction commits (the task must see the rows that name it). In the
embedded default (no broker) the task runs on a background thread of this process,
so that the page that started it can poll its progress; with a broker it goes to
the workers.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Task
from django.conf import settings
from django.db import close_old_connections, transaction
from django.utils import timezone

from annotation.exceptions import NotFoundError
from annotation.models import ReleaseJob

logger = logging.getLogger(__name__)


def _run_in_thread(task: Task, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    def target() -> None:
        close_old_connections()
        try:
            task.apply(args=args, kwargs=kwargs, throw=False)
        except Exception:  # the task records its own failure; this is the last resort
            logger.exception("in-process task %s failed", task.name)
        finally:
            close_old_connections()

    threading.Thread(target=target, name=f"task-{task.name}", daemon=True).start()


def enqueue(task: Task, *args: Any, **kwargs: Any) -> None:
    """Run ``task(*args, **kwargs)`` in the background once the current transaction commits."""

    def send() -> None:
        if getattr(settings, "SCREENQA_INPROCESS_THREADS", False):
            _run_in_thread(task, args, kwargs)
        else:
            task.apply_async(args=args, kwargs=kwargs)

    transaction.on_commit(send)


def release_job_begin(job_id: int, kind: str) -> ReleaseJob | None:
    job = ReleaseJob.objects.select_related("project").filter(pk=job_id, kind=kind).first()
    if job is None:
        raise NotFoundError(f"No {kind} job {job_id}.")
    if job.status == ReleaseJob.Status.DONE:
        return None  # a redelivered message: the work is done
    ReleaseJob.objects.filter(pk=job.pk).update(
        status=ReleaseJob.Status.RUNNING, processed=0, error="", updated_at=timezone.now()
    )
    return job


def release_job_progress(job: ReleaseJob, *, processed: int) -> None:
    ReleaseJob.objects.filter(pk=job.pk).update(processed=processed, updated_at=timezone.now())


def release_job_finish(job: ReleaseJob, *, result: dict[str, Any]) -> None:
    now = timezone.now()
    ReleaseJob.objects.filter(pk=job.pk).update(
        status=ReleaseJob.Status.DONE, result=result, finished_at=now, updated_at=now
    )


def release_job_fail(job_id: int, exc: BaseException) -> None:
    now = timezone.now()
    ReleaseJob.objects.filter(pk=job_id).update(
        status=ReleaseJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=now, updated_at=now
    )

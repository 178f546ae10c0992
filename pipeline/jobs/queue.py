"""Queueing a job's run: the one way the product hands work to the background.

``enqueue`` sends the one job task (``pipeline.jobs.tasks``) once the current transaction commits (the
run must see the row that names it). In the embedded default (no broker) the task runs on a background
thread of this process instead, so that the page that started it can poll its progress.

The task is named, not imported: producers and the worker meet at the broker by the task's name, as
Celery intends, so that starting a job does not import every kind of work (``pipeline.kinds``).
``pipeline.apps`` imports the task module, so the name is known in every process (web and worker).
"""

from __future__ import annotations

import contextvars
import logging
import threading

from celery import Task
from django.conf import settings
from django.db import close_old_connections, transaction

from annotation.celery import app

logger = logging.getLogger(__name__)

JOB_RUN_TASK = "pipeline.job_run"


def _run_in_thread(task: Task, kind: str, job_id: int) -> None:
    def target() -> None:
        close_old_connections()
        try:
            task.apply(args=(kind, job_id), throw=False)
        except Exception:  # the run records its own failure; this is the last resort
            logger.exception("in-process job %s %s failed", kind, job_id)
        finally:
            close_old_connections()

    # The request's log context (its id, annotator, project) goes along into the thread.
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(target,), name=f"job-{kind}-{job_id}", daemon=True).start()


def enqueue(*, kind: str, job_id: int) -> None:
    """Run job ``job_id`` of ``kind`` in the background once the current transaction commits."""

    def send() -> None:
        task = app.tasks[JOB_RUN_TASK]
        if settings.SCREENQA_INPROCESS_THREADS:
            _run_in_thread(task, kind, job_id)
        else:
            task.apply_async(args=(kind, job_id))

    transaction.on_commit(send)

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

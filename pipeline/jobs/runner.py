"""Running one job: claim it, beat while its work runs, then finish it or record why it failed.

``job_run`` is what the Celery task (``pipeline.jobs.tasks``), the in-process thread and the management
commands call; the work itself is the kind's function (``pipeline.kinds``).

The heartbeat and the progress are written by a thread of their own, on a database connection of their
own: the work's transactions never carry them (an export reads inside one read-only snapshot transaction,
where a write would fail and stay invisible anyway), and a work function only calls ``progress`` (which
records two numbers in memory). The thread writes at most every ``PROGRESS_INTERVAL`` seconds when the
numbers moved, and at least every ``SCREENQA_JOB_HEARTBEAT_SECONDS``. When the process dies the beats stop,
and the job turns stale (``pipeline.jobs.lifecycle.job_is_stale``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation import observability
from annotation.exceptions import NotFoundError
from annotation.models import Job, Project

from .kinds import job_kind_get
from .lifecycle import JobLost, job_claim, job_fail, job_finish

logger = logging.getLogger(__name__)

# The pages poll once a second; one UPDATE per screen or batch would be thousands of writes.
PROGRESS_INTERVAL = 0.5


class Heartbeat:
    """The beat and progress writer of one claimed run (a daemon thread; ``start``, then ``stop``)."""

    def __init__(self, *, job: Job) -> None:
        self.model = type(job)
        self.job_id = job.pk
        self.attempt = job.attempts
        self.processed = 0
        self.total = job.total
        self.lost = False
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._written: tuple[int, int] = (-1, -1)
        self._beat_at = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{job.kind}-{job.pk}", daemon=True)

    def progress(self, processed: int, total: int | None = None) -> None:
        """The work's ``Progress``: records the numbers; raises ``JobLost`` once another run owns the job."""
        if self.lost:
            raise JobLost(f"{self.model.__name__} {self.job_id} was claimed by another run.")
        with self._lock:
            self.processed = processed
            if total is not None:
                self.total = total

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> tuple[int, int]:
        """Stop beating; the last numbers reported (processed, total)."""
        self._stopping.set()
        self._thread.join(timeout=30)
        return self.processed, max(self.total, self.processed)

    def _loop(self) -> None:
        try:
            while not self._stopping.wait(PROGRESS_INTERVAL):
                with self._lock:
                    numbers = (self.processed, max(self.total, self.processed))
                due = time.monotonic() - self._beat_at >= settings.SCREENQA_JOB_HEARTBEAT_SECONDS
                if numbers != self._written or due:
                    self._write(numbers)
        finally:
            connection.close()  # this thread's own connection

    def _write(self, numbers: tuple[int, int]) -> None:
        rows = self.model._default_manager.filter(pk=self.job_id)
        try:
            written = rows.filter(attempts=self.attempt).update(
                processed=numbers[0], total=numbers[1], heartbeat_at=timezone.now(), updated_at=timezone.now()
            )
            # Nothing written: either another run claimed the job (attempts moved on), or this thread cannot
            # see the row at all (a test's uncommitted transaction): only the first means "lost".
            if not written and rows.exclude(attempts=self.attempt).exists():
                self.lost = True
                self._stopping.set()
        except Exception:  # a database hiccup: the next beat tries again; the job turns stale if none gets through
            logger.exception("heartbeat of %s %s failed", self.model.__name__, self.job_id)
            connection.close()
            return
        self._written = numbers
        self._beat_at = time.monotonic()


def job_run(*, kind: str, job_id: int, **options: Any) -> Job | None:
    """Run job ``job_id`` of ``kind`` if it is there to run (see ``job_claim``); the job as it stands after.

    Idempotent: a job that is done, failed, or running elsewhere with a live heartbeat is returned as it is
    (a duplicate delivery is a no-op). ``options`` go to the work function (a batch size, a backend).
    A failure is recorded on the job (``failed`` and the reason) and re-raised, so the worker sees it too.
    """
    spec = job_kind_get(kind)
    job = job_claim(model=spec.model, job_id=job_id, kind=kind)
    if job is None:
        return spec.model._default_manager.filter(pk=job_id).first()
    heartbeat = Heartbeat(job=job)
    heartbeat.start()
    started = time.monotonic()
    try:
        outcome = spec.work(job=job, progress=heartbeat.progress, **options)
    except JobLost:
        heartbeat.stop()
        observability.job_ran(kind=kind, outcome="lost", seconds=time.monotonic() - started)
        logger.warning("%s job %s was taken over by another run; this one stops", kind, job_id)
        return spec.model._default_manager.filter(pk=job_id).first()
    except Exception as exc:
        heartbeat.stop()
        logger.exception("%s job %s failed", kind, job_id)
        observability.job_ran(kind=kind, outcome="failed", seconds=time.monotonic() - started)
        job_fail(job=job, exc=exc)
        raise
    except BaseException:
        # The process is being stopped (SystemExit, KeyboardInterrupt): not the work's fault. The job stays
        # running without beats, turns stale, and a redelivery or a re-run finishes it.
        heartbeat.stop()
        raise
    processed, total = heartbeat.stop()
    observability.job_ran(kind=kind, outcome="done", seconds=time.monotonic() - started)
    if not job_finish(job=job, outcome=outcome, processed=processed, total=total):
        logger.warning("%s job %s finished, but another run owns it now", kind, job_id)
        return spec.model._default_manager.filter(pk=job_id).first()
    return job


def job_run_now(*, kind: str, project_slug: str, **options: Any) -> Job:
    """Create a job of ``kind`` for the project and run it in this process (an operator's command, no queue).

    For kinds that need no input beyond the project (post-processing, short answers).
    ``NotFoundError`` for an unknown project; a failure is recorded on the job and re-raised.
    """
    spec = job_kind_get(kind)
    project = Project.objects.filter(slug=project_slug).first()
    if project is None:
        raise NotFoundError(f"No project {project_slug!r}.")
    job = spec.model._default_manager.create(project=project, **spec.fields)
    ran = job_run(kind=kind, job_id=job.pk, **options)
    assert ran is not None
    return ran

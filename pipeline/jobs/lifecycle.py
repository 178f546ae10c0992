"""The one job lifecycle: every kind of job moves through these functions, and only these.

    queued --claim--> running --finish--> done
                         |----fail------> failed
    failed, or queued/running and stale --re-run--> queued

* **create** (``job_create``): the row and its run queued on commit (``pipeline.jobs.queue``).
* **claim** (``job_claim``, under ``job_lock``): a queued job, or a stale running one (its worker died and
  the broker delivered the task again), becomes ``running`` with ``attempts + 1``. A job that is done,
  failed, or running with a live heartbeat is left alone: the guard that keeps a live job from running twice.
* **heartbeat and progress**: written by the runner (``pipeline.jobs.runner``) while the work runs.
* **finish** / **fail**: conditional on the claim's ``attempts``, so a run that was taken for dead and
  replaced can no longer write into the row. A failure keeps its reason (``error``).
* **the stale rule** (``job_is_stale``, ``jobs_alive``): a queued or running job whose ``heartbeat_at`` is
  older than ``SCREENQA_JOB_STALE_SECONDS`` has no worker. Running jobs beat every
  ``SCREENQA_JOB_HEARTBEAT_SECONDS``; creation and re-queueing count as a beat.
* **re-run** (``job_rerun``): a failed or stale job is queued again. Every work function is idempotent (it
  does only the missing work, or redoes all of it without duplicates), so a re-run finishes the job.

What a work function receives and returns is defined here too (``Progress``, ``Outcome``); the table of
kinds is ``pipeline.kinds``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.exceptions import ConflictError, NotFoundError
from annotation.lock_objects import job_lock
from annotation.models import Job, JobStatus, Project
from annotation.permissions import project_require_lead

from .queue import enqueue

logger = logging.getLogger(__name__)

J = TypeVar("J", bound=Job)
ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
ERROR_MAX_CHARS = 4000


class Progress(Protocol):
    """How a work function reports progress: cheap to call often (it only records the numbers).

    ``total`` may be given once it is known, and changed; it raises ``JobLost`` when the job was taken
    over by another run (this one was taken for dead), so the work stops at its next report.
    """

    def __call__(self, processed: int, total: int | None = None) -> None: ...


@dataclass(frozen=True)
class Outcome:
    """What a work function returns: ``result`` for the row's ``result``, and ``fields``, other columns of
    the row written in the same statement that marks the job done (an export's ``artifact``)."""

    result: dict[str, Any]
    fields: dict[str, Any] = field(default_factory=dict)


class JobLost(Exception):
    """This run no longer owns its job: it was taken for dead and claimed by another run."""


def stale_before(now: datetime | None = None) -> datetime:
    """Heartbeats older than this are stale."""
    return (now or timezone.now()) - timedelta(seconds=settings.SCREENQA_JOB_STALE_SECONDS)


def job_is_stale(*, job: Job, now: datetime | None = None) -> bool:
    """Queued or running without a sign of life for ``SCREENQA_JOB_STALE_SECONDS``: its worker is gone
    (or its message was lost). The one stale rule; ``jobs_alive`` is the same rule in SQL."""
    return job.status in ACTIVE and job.heartbeat_at < stale_before(now)


def jobs_alive(queryset: QuerySet[J]) -> QuerySet[J]:
    """The queued or running jobs of ``queryset`` that are not stale."""
    return queryset.filter(status__in=ACTIVE, heartbeat_at__gte=stale_before())


def job_can_rerun(*, job: Job) -> bool:
    return job.status == JobStatus.FAILED or job_is_stale(job=job)


def job_create(*, model: type[J], project: Project, user: Any, **fields: Any) -> J:
    """Record a queued job of ``model`` (``fields``: its kind-specific columns) and queue its run once the
    transaction commits. The caller has validated the input and checked that ``user`` may start it."""
    with transaction.atomic():
        job = model._default_manager.create(
            project=project, created_by=user if getattr(user, "is_authenticated", False) else None, **fields
        )
        enqueue(kind=job.kind, job_id=job.pk)
    return job


def job_start_once(*, model: type[J], project: Project, user: Any, kind: str) -> J:
    """Queue a job of ``kind`` for ``project``, or return the one alive already (``jobs_alive``): a second
    click, or a second view of stale figures, starts nothing. The caller checked that ``user`` may start it
    (``None``: nobody's, a view's automatic refresh)."""
    alive = jobs_alive(model._default_manager.filter(project=project, kind=kind)).order_by("-pk").first()
    if alive is not None:
        return alive
    return job_create(model=model, project=project, user=user, kind=kind)


@dataclass(frozen=True)
class Freshness:
    """How old the stored figures a view shows are, and whether a job is computing them again."""

    computed_at: datetime
    refreshing: bool


def stored_figures_freshness(
    *, computed_at: datetime | None, compute: Callable[[], datetime], refresh: Callable[[], Any]
) -> Freshness:
    """The one rule of figures that a job computes and a page reads (the analysis and project pages'
    snapshots, ``pipeline.analytics.stored``; the quality page's rows, ``pipeline.quality.figures``):

    * none yet (``computed_at`` is ``None``): ``compute`` them in the request (it returns their time);
    * older than ``SCREENQA_STORED_FIGURES_MAX_AGE`` seconds: ``refresh`` (queue the job, nobody's, unless
      one is alive) and show the old ones with their time until the job has stored new ones;
    * else: as they are.
    """
    if computed_at is None:
        return Freshness(compute(), refreshing=False)
    if (timezone.now() - computed_at).total_seconds() <= settings.SCREENQA_STORED_FIGURES_MAX_AGE:
        return Freshness(computed_at, refreshing=False)
    refresh()
    return Freshness(computed_at, refreshing=True)


def job_claim(*, model: type[J], job_id: int, kind: str) -> J | None:
    """Take job ``job_id`` for this run, or ``None`` if there is nothing to run.

    Under ``job_lock`` (so two deliveries cannot both take it): a ``queued`` job, or a ``running`` one that
    is stale, becomes ``running`` with a fresh heartbeat, ``attempts + 1`` and its progress reset (the work
    starts over; it skips what earlier runs finished). ``None`` for a job that is gone, done, failed (only
    ``job_rerun`` runs it again) or running with a live heartbeat (another worker has it).
    ``NotFoundError`` when the row is of another kind (a message that names the wrong kind).
    """
    with transaction.atomic():
        try:
            job = job_lock(model=model, job_id=job_id)
        except model.DoesNotExist:  # type: ignore[attr-defined]
            logger.warning("%s job %s is gone; nothing to run", kind, job_id)
            return None
        if job.kind != kind:
            raise NotFoundError(f"Job {job_id} is a {job.kind} job, not {kind}.")
        if job.status != JobStatus.QUEUED and not job_is_stale(job=job):
            logger.info("%s job %s is %s; not claimed", kind, job_id, job.status)
            return None
        if job.status == JobStatus.RUNNING:
            logger.warning("%s job %s: no heartbeat since %s, taking it over", kind, job_id, job.heartbeat_at)
        job.status = JobStatus.RUNNING
        job.attempts += 1
        job.heartbeat_at = timezone.now()
        job.processed = 0
        job.error = ""
        job.finished_at = None
        job.save(
            update_fields=["status", "attempts", "heartbeat_at", "processed", "error", "finished_at", "updated_at"]
        )
    return job


def job_finish(*, job: Job, outcome: Outcome, processed: int, total: int) -> bool:
    """Mark the claimed ``job`` done with its outcome, in one statement (and on the instance).

    False, and nothing written, if another run owns the job now.
    """
    now = timezone.now()
    total = max(total, processed)
    values = {
        "status": JobStatus.DONE,
        "result": outcome.result,
        "processed": total,
        "total": total,
        "heartbeat_at": now,
        "finished_at": now,
        "updated_at": now,
        **outcome.fields,
    }
    if not type(job)._default_manager.filter(pk=job.pk, attempts=job.attempts).update(**values):
        return False
    for name, value in values.items():
        setattr(job, name, value)
    return True


def job_fail(*, job: Job, exc: BaseException) -> None:
    """Record why the claimed ``job`` failed (unless another run owns it now, or it was re-queued)."""
    now = timezone.now()
    reason = f"{type(exc).__name__}: {exc}".strip().removesuffix(":")
    type(job)._default_manager.filter(pk=job.pk, attempts=job.attempts, status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED, error=reason[:ERROR_MAX_CHARS], finished_at=now, updated_at=now
    )


def job_get_for_lead(*, model: type[J], user: Any, job_id: int) -> J:
    """The job if ``user`` leads its project or is a site admin (one query for the job and its project).

    Non-members get ``NotFoundError``; annotators of the project ``PermissionDeniedError``.
    """
    job = model._default_manager.select_related("project", "created_by").filter(pk=job_id).first()
    if job is None:
        raise NotFoundError("Job not found.")
    try:
        project_require_lead(user=user, project=job.project)
    except NotFoundError:
        raise NotFoundError("Job not found.") from None
    return job


def job_rerun(*, model: type[J], user: Any, job_id: int) -> J:
    """Queue a failed or stale job again (leads of its project and site admins).

    Under ``job_lock``: a done job, or one whose worker is alive, is a ``ConflictError`` and nothing is
    queued. The run that follows claims it like any other (``job_claim``) and does only the missing work.
    """
    job_get_for_lead(model=model, user=user, job_id=job_id)
    with transaction.atomic():
        job = job_lock(model=model, job_id=job_id)
        if job.status == JobStatus.DONE:
            raise ConflictError(f"This {job.kind} job is already done.", extra={"status": job.status})
        if not job_can_rerun(job=job):
            raise ConflictError(
                f"This {job.kind} job is still {job.status}; it can be run again once its worker has given no "
                f"sign of life for {settings.SCREENQA_JOB_STALE_SECONDS} seconds.",
                extra={"status": job.status},
            )
        job.status = JobStatus.QUEUED
        job.error = ""
        job.finished_at = None
        job.heartbeat_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at", "heartbeat_at", "updated_at"])
        enqueue(kind=job.kind, job_id=job.pk)
    return job

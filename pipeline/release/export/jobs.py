"""Exports as background jobs: a lead starts one, a Celery task runs it and stores a zip.

The job row (``ReleaseJob`` of kind ``export``) is the ledger: the task claims it with a
conditional update (no row lock needed: one UPDATE decides), reports progress into it, and
records success (the artifact) or failure (the error). Re-running a job redoes the whole
export, which is deterministic, so a redelivered task overwrites the artifact with the same bytes.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db import connections, transaction
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Project, ReleaseJob
from annotation.permissions import project_require_lead
from pipeline.jobs import enqueue

from .service import FORMATS, release_export, release_question_count

logger = logging.getLogger(__name__)
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so that the same export gives the same zip bytes


@transaction.atomic
def release_export_start(*, project: Project, user: Any, fmt: str) -> ReleaseJob:
    """Create a queued export job and queue its task after commit. The caller checked that ``user`` leads."""
    if fmt not in FORMATS:
        raise ApplicationError(f"Unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}.", field="format")
    job = ReleaseJob.objects.create(
        project=project,
        kind=ReleaseJob.Kind.EXPORT,
        format=fmt,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        total=release_question_count(project=project),
    )
    from pipeline.tasks.export import export_release_task

    enqueue(export_release_task, job.pk)
    return job


def zip_folder(*, folder: Path, target: Path) -> None:
    """Deterministic zip: sorted names, fixed dates and permissions."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with open(path, "rb") as src, zf.open(info, "w") as dst:
                while block := src.read(1 << 20):
                    dst.write(block)


def _progress_report(*, job_id: int, done: int) -> None:
    """Record progress from a short-lived thread, i.e. on a connection of its own: the export
    reads inside one read-only snapshot transaction, where a write would fail, and would stay
    invisible to the polling page until the end anyway."""

    def target() -> None:
        try:
            ReleaseJob.objects.filter(pk=job_id).update(processed=done, updated_at=timezone.now())
        finally:
            connections.close_all()  # this thread's connections only

    thread = threading.Thread(target=target, name=f"export-progress-{job_id}")
    thread.start()
    thread.join()


def release_export_job_run(*, job_id: int) -> bool:
    """Run export job ``job_id``. Returns False (and does nothing) if it is finished or gone.

    Idempotent: a done or failed job is left alone; a queued or running one (a redelivered
    task after a worker died) is (re)run from the start. A failure is recorded on the job and re-raised.
    """
    claimed = ReleaseJob.objects.filter(
        pk=job_id, kind=ReleaseJob.Kind.EXPORT, status__in=[ReleaseJob.Status.QUEUED, ReleaseJob.Status.RUNNING]
    ).update(status=ReleaseJob.Status.RUNNING, processed=0, error="", updated_at=timezone.now())
    if not claimed:
        return False
    job = ReleaseJob.objects.select_related("project").get(pk=job_id)
    project = job.project

    def progress(done: int) -> None:
        _progress_report(job_id=job_id, done=done)

    try:
        ReleaseJob.objects.filter(pk=job_id).update(total=release_question_count(project=project))
        with tempfile.TemporaryDirectory(prefix="export-") as tmp:
            folder = Path(tmp) / "release"
            manifest = release_export(project=project, out_dir=folder, fmt=job.format, progress=progress)
            archive = Path(tmp) / "release.zip"
            zip_folder(folder=folder, target=archive)
            name = f"{project.slug}-export-{job.pk}-{job.format}.zip"
            with open(archive, "rb") as fh:
                job.artifact.save(name, File(fh, name=name), save=False)
        ReleaseJob.objects.filter(pk=job_id).update(
            status=ReleaseJob.Status.DONE,
            total=manifest["counts"]["total"]["questions"],
            processed=manifest["counts"]["total"]["questions"],
            artifact=job.artifact.name,
            result={"counts": manifest["counts"], "files": manifest["files"], "code_version": manifest["code_version"]},
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    except Exception as exc:
        logger.exception("export job %s failed", job_id)
        ReleaseJob.objects.filter(pk=job_id).update(
            status=ReleaseJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        raise
    return True


def release_export_jobs(*, project: Project, limit: int = 50) -> list[ReleaseJob]:
    """Past exports of ``project``, newest first."""
    return list(
        ReleaseJob.objects.filter(project=project, kind=ReleaseJob.Kind.EXPORT)
        .select_related("created_by")
        .order_by("-created_at", "-pk")[:limit]
    )


def release_export_job_get_for_lead(*, user: Any, job_id: int, slug: str | None = None) -> ReleaseJob:
    """The export job if ``user`` leads its project: non-members get NotFoundError, annotators PermissionDeniedError."""
    job = ReleaseJob.objects.select_related("project").filter(pk=job_id, kind=ReleaseJob.Kind.EXPORT).first()
    if job is None or (slug is not None and job.project.slug != slug):
        raise NotFoundError("Export not found.")
    project_require_lead(user=user, project=job.project)
    return job


def release_export_download_get(*, user: Any, job_id: int) -> ReleaseJob:
    """The finished export job whose artifact ``user`` may download (leads only)."""
    job = release_export_job_get_for_lead(user=user, job_id=job_id)
    if job.status != ReleaseJob.Status.DONE or not job.artifact:
        raise ConflictError("This export has not finished.", extra={"status": job.status})
    return job

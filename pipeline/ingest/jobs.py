"""Import jobs: the RICO import of ``pipeline.ingest`` started from the web.

A lead uploads a zip (stored as ``imports/<uuid>.zip`` in default storage) or names a
storage prefix; ``import_job_create`` records an ``ImportJob`` and queues
``pipeline.tasks.imports.import_job_run_task``, which calls ``import_job_run``.
The importer skips screens already present, so running a job again (after a worker
was killed mid-job) finishes it without duplicates.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.lock_objects import import_job_lock
from annotation.models import ImportJob, Project
from annotation.permissions import project_require_lead
from pipeline.ingest import StoragePrefix, import_screens
from pipeline.jobs import enqueue

logger = logging.getLogger(__name__)

DEVICE_SIZE_RE = re.compile(r"^\s*(\d{2,5})\s*[xX×]\s*(\d{2,5})\s*$")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with entries, an empty zip
# Progress is written at most this often (seconds): one UPDATE per screen would be
# thousands of writes for a RICO-sized import, and the page polls once a second.
PROGRESS_INTERVAL = 0.5
# A queued or running job whose row has not moved for this long has lost its worker (the
# importer reports progress at least every 25 pairs); a lead may then run it again.
STALE_AFTER = timedelta(minutes=10)


def device_size_parse(*, value: str | None) -> tuple[int, int] | None:
    """``"1440x2560"`` -> ``(1440, 2560)``; empty -> ``None`` (the project's device size)."""
    if value is None or not value.strip():
        return None
    match = DEVICE_SIZE_RE.match(value)
    if not match:
        raise ApplicationError('Device size must look like "1440x2560".', field="device_size")
    width, height = int(match.group(1)), int(match.group(2))
    if width <= 0 or height <= 0:
        raise ApplicationError("Device size must be positive.", field="device_size")
    return width, height


def _prefix_clean(prefix: str) -> str:
    """A relative storage prefix without ``..``: a lead may only name folders inside storage."""
    cleaned = prefix.strip().strip("/")
    parts = PurePosixPath(cleaned).parts if cleaned else ()
    if not parts or any(part in ("..", ".") for part in parts) or "\\" in cleaned or "\x00" in cleaned:
        raise ApplicationError("Name a folder inside storage, like imports/rico-batch-1.", field="prefix")
    return "/".join(parts)


def _too_large(size: int) -> ApplicationError:
    limit = settings.SCREENQA_IMPORT["MAX_UPLOAD_BYTES"]
    return ApplicationError(f"The file is {size:,} bytes; uploads are limited to {limit:,} bytes.", field="file")


def import_request_size_check(*, content_length: str | int | None) -> None:
    """Refuse a request body over the upload cap before it is read.

    The API calls this before touching the body, so that an oversized upload sent with a
    token is refused at once instead of being spooled to disk first. (With a session, CSRF
    checking reads the form body earlier; ``import_job_create`` checks the file itself in
    every case: this is only the early, cheap half of the same rule.)
    """
    try:
        size = int(content_length or 0)
    except (TypeError, ValueError):
        return
    # Multipart framing adds a little: allow 1 MiB over the cap for headers and boundaries.
    if size > settings.SCREENQA_IMPORT["MAX_UPLOAD_BYTES"] + 1024 * 1024:
        raise _too_large(size)


def _upload_check(upload: UploadedFile) -> None:
    if upload.size is not None and upload.size > settings.SCREENQA_IMPORT["MAX_UPLOAD_BYTES"]:
        raise _too_large(upload.size)
    upload.seek(0)
    head = upload.read(4)
    upload.seek(0)
    if head not in ZIP_MAGIC:
        raise ApplicationError("The file is not a zip archive.", field="file")


def import_job_create(
    *,
    project: Project,
    user: Any,
    upload: UploadedFile | None = None,
    prefix: str | None = None,
    device_size: str | None = None,
) -> ImportJob:
    """Record an import of ``upload`` (a zip) or of a storage ``prefix`` and queue it.

    Exactly one source. Validation happens before anything is written, so bad input
    loses nothing and leaves nothing behind. The upload is stored first (outside the
    transaction: storage is not transactional), then the job row is created and the
    task queued on commit; if the row cannot be written the stored file is removed.
    """
    if (upload is None) == (not prefix or not prefix.strip()):
        raise ApplicationError("Upload a zip file or name a storage prefix (one of the two).", field="file")
    size = device_size_parse(value=device_size)
    if upload is not None:
        _upload_check(upload)
        source = default_storage.save(f"imports/{uuid.uuid4()}.zip", upload)
        kind = "zip"
    else:
        assert prefix is not None
        source = _prefix_clean(prefix)
        kind = "prefix"
        try:
            dirs, files = default_storage.listdir(source)
        except (FileNotFoundError, NotADirectoryError):
            dirs, files = [], []
        if not dirs and not files:
            raise ApplicationError(f"Nothing is stored under {source!r}.", field="prefix")
    try:
        with transaction.atomic():
            job = ImportJob.objects.create(
                project=project,
                created_by=user if getattr(user, "is_authenticated", False) else None,
                source=source,
                source_kind=kind,
                device_width=size[0] if size else None,
                device_height=size[1] if size else None,
            )
            from pipeline.tasks.imports import import_job_run_task  # the task module imports this one

            enqueue(import_job_run_task, job.pk)
    except BaseException:
        if kind == "zip":
            default_storage.delete(source)
        raise
    return job


def _progress_writer(job_id: int) -> Any:
    last = 0.0

    def progress(processed: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < PROGRESS_INTERVAL and processed < total:
            return
        last = now
        total = max(total, processed)
        ImportJob.objects.filter(pk=job_id).update(processed=processed, total=total, updated_at=timezone.now())

    return progress


def _source_open(job: ImportJob) -> tuple[Any, IO[bytes] | None]:
    """The importer's ``source`` for a job and the file to close afterwards (if any)."""
    if job.source_kind == "prefix":
        return StoragePrefix(job.source), None
    try:
        # Local storage: hand over the path (the zip is read in place, no copy).
        return Path(default_storage.path(job.source)), None
    except NotImplementedError:
        # Remote storage (S3): a seekable file object.
        handle = default_storage.open(job.source, "rb")
        return handle, handle


def import_job_run(*, job_id: int) -> ImportJob:
    """Run (or finish) an import job. Idempotent.

    Locks: ``import_job_lock`` only while switching the status, never during the import,
    so the progress updates and the status page are never blocked.

    * a job already ``done`` is left as it is (a duplicate delivery is a no-op);
    * a ``queued``, ``running`` (its worker died) or ``failed`` job is (re)started: the
      importer skips screens already present, so only the missing work is done;
    * a failure is recorded (status ``failed`` plus the error text) and re-raised.
    """
    with transaction.atomic():
        job = import_job_lock(job_id=job_id)
        if job.status == ImportJob.Status.DONE:
            return job
        job.status = ImportJob.Status.RUNNING
        job.error = ""
        job.finished_at = None
        job.save(update_fields=["status", "error", "finished_at", "updated_at"])
    project = job.project
    device_size = (job.device_width, job.device_height) if job.device_width and job.device_height else None
    handle: IO[bytes] | None = None
    try:
        source, handle = _source_open(job)
        summary = import_screens(
            project=project, source=source, device_size=device_size, progress=_progress_writer(job.pk)
        )
        result = summary.as_dict()
    except BaseException as exc:
        logger.exception("import job %s failed", job_id)
        message = f"{type(exc).__name__}: {exc}".strip()
        ImportJob.objects.filter(pk=job_id).update(
            status=ImportJob.Status.FAILED,
            error=message[:4000],
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
        raise
    finally:
        if handle is not None:
            handle.close()
    with transaction.atomic():
        job = import_job_lock(job_id=job_id)
        job.status = ImportJob.Status.DONE
        job.summary = result
        job.total = max(job.total, job.processed)
        job.processed = job.total
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "summary", "total", "processed", "finished_at", "updated_at"])
    return job


def import_job_can_retry(*, job: ImportJob) -> bool:
    """Failed, or queued/running with no progress for ``STALE_AFTER`` (its worker is gone)."""
    if job.status == ImportJob.Status.FAILED:
        return True
    if job.status in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING):
        return job.updated_at < timezone.now() - STALE_AFTER
    return False


def import_job_retry(*, user: Any, job_id: int) -> ImportJob:
    """Queue a failed or stalled job again (leads of its project and site admins).

    Under ``import_job_lock``: a done job, or one still making progress, is a
    ``ConflictError`` (nothing queued). The run only does the missing work (see
    ``import_job_run``); even a run that overlaps a live one cannot duplicate screens
    (the screen unique constraint), it would only repeat work, hence the staleness rule.
    """
    import_job_get_for_lead(user=user, job_id=job_id)
    with transaction.atomic():
        job = import_job_lock(job_id=job_id)
        if not import_job_can_retry(job=job):
            if job.status == ImportJob.Status.DONE:
                raise ConflictError("This import is already done.")
            raise ConflictError("This import is still running; it can be run again after 10 minutes without progress.")
        job.status = ImportJob.Status.QUEUED
        job.error = ""
        job.finished_at = None
        job.save(update_fields=["status", "error", "finished_at", "updated_at"])
        from pipeline.tasks.imports import import_job_run_task  # the task module imports this one

        enqueue(import_job_run_task, job.pk)
    return job


def import_job_get_for_lead(*, user: Any, job_id: int) -> ImportJob:
    """The job if ``user`` leads its project (or is a site admin).

    Non-members get ``NotFoundError``; annotators of the project ``PermissionDeniedError``.
    """
    job = ImportJob.objects.select_related("project", "created_by").filter(pk=job_id).first()
    if job is None:
        raise NotFoundError("Import job not found.")
    try:
        project_require_lead(user=user, project=job.project)
    except NotFoundError:
        raise NotFoundError("Import job not found.") from None
    return job


def import_job_list(*, project: Project, limit: int = 20) -> QuerySet[ImportJob]:
    """The project's most recent import jobs, newest first."""
    return ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at")[:limit]

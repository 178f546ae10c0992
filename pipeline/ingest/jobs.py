"""Import jobs: the RICO import of ``pipeline.ingest`` started from the web.

A lead uploads a zip (stored as ``imports/<uuid>.zip`` in default storage) or names a
storage prefix; ``import_job_create`` validates the request and records an ``ImportJob``
through the job lifecycle (``pipeline.jobs``), which runs ``import_job_work``. Following,
failing and re-running the job are the lifecycle's, like every other kind of job.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet

from annotation.exceptions import ApplicationError
from annotation.models import ImportJob, Project
from pipeline.ingest import StoragePrefix, import_screens
from pipeline.ingest.sources import zip_entries_check
from pipeline.jobs.lifecycle import Outcome, Progress, job_create

DEVICE_SIZE_RE = re.compile(r"^\s*(\d{2,5})\s*[xX×]\s*(\d{2,5})\s*$")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with entries, an empty zip


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


# Storage-prefix imports read only from the project's own import area: ``staging/<slug>/`` in
# the default storage (the bucket in production), where its leads stage screens.
IMPORT_AREA = "staging"
_DRIVE_RE = re.compile(r"^[A-Za-z]:")


def project_import_area(*, project: Project) -> str:
    """The storage folder a project's storage-prefix imports may read: ``staging/<slug>``."""
    return f"{IMPORT_AREA}/{project.slug}"


def _prefix_clean(*, project: Project, prefix: str) -> str:
    """The storage path of a folder named by a lead, inside the project's import area.

    ``prefix`` is relative to the area (``batch-1``; the area's own path in front is accepted
    too). Absolute paths, ``..``, ``.``, backslashes and control characters are refused: a lead
    may not reach outside their project's area, and nothing outside it is ever listed."""
    raw = prefix.strip()
    refused = ApplicationError(
        f"Name a folder inside this project's import area {project_import_area(project=project)}/, "
        "like batch-1 (relative: no leading /, no ..).",
        field="prefix",
    )
    if raw.startswith(("/", "\\")) or _DRIVE_RE.match(raw) or "://" in raw:
        raise refused
    cleaned = raw.strip("/")
    parts = PurePosixPath(cleaned).parts if cleaned else ()
    if not parts or any(part in ("..", ".") for part in cleaned.split("/")) or "\\" in cleaned:
        raise refused
    if any(ord(c) < 32 or ord(c) == 127 for c in cleaned):
        raise refused
    area = project_import_area(project=project)
    relative = "/".join(parts)
    if relative == area or relative.startswith(f"{area}/"):
        relative = relative[len(area) :].strip("/")
    return f"{area}/{relative}" if relative else area


def _in_import_area(*, project: Project, source: str) -> bool:
    area = project_import_area(project=project)
    parts = source.split("/")
    return (source == area or source.startswith(f"{area}/")) and ".." not in parts and "." not in parts


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
    # Refused in the request, before it is stored or queued (the worker checks again: ZipSource).
    zip_entries_check(upload, cap=int(settings.SCREENQA_IMPORT["ZIP_MAX_ENTRIES"]))


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
    transaction: storage is not transactional), then the job row is created and its run
    queued on commit (``job_create``); if the row cannot be written the stored file is removed.
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
        source = _prefix_clean(project=project, prefix=prefix)
        kind = "prefix"
        try:
            dirs, files = default_storage.listdir(source)
        except (FileNotFoundError, NotADirectoryError):
            dirs, files = [], []
        if not dirs and not files:
            raise ApplicationError(f"Nothing is stored under {source!r}.", field="prefix")
    try:
        job = job_create(
            model=ImportJob,
            project=project,
            user=user,
            source=source,
            source_kind=kind,
            device_width=size[0] if size else None,
            device_height=size[1] if size else None,
        )
    except BaseException:
        if kind == "zip":
            default_storage.delete(source)
        raise
    return job


def _source_open(job: ImportJob) -> tuple[Any, IO[bytes] | None]:
    """The importer's ``source`` for a job and the file to close afterwards (if any)."""
    if job.source_kind == "prefix":
        # Checked again here: a job recorded before imports were scoped may name any folder.
        if not _in_import_area(project=job.project, source=job.source):
            raise ApplicationError(
                f"The folder {job.source!r} is outside this project's import area "
                f"{project_import_area(project=job.project)}/: start a new import from there."
            )
        return StoragePrefix(job.source), None
    try:
        # Local storage: hand over the path (the zip is read in place, no copy).
        return Path(default_storage.path(job.source)), None
    except NotImplementedError:
        # Remote storage (S3): a seekable file object.
        handle = default_storage.open(job.source, "rb")
        return handle, handle


def import_job_work(*, job: ImportJob, progress: Progress) -> Outcome:
    """The import job's work (``pipeline.kinds``): import the job's source into its project.

    Idempotent: the importer skips screens already present (each screen commits with its candidates), so
    a re-run after a failure or a killed worker imports only the missing screens, and reports the others
    as ``already_present``; the screen unique constraint rules out duplicates even for overlapping runs.
    """
    device_size = (job.device_width, job.device_height) if job.device_width and job.device_height else None
    source, handle = _source_open(job)
    try:
        summary = import_screens(project=job.project, source=source, device_size=device_size, progress=progress)
    finally:
        if handle is not None:
            handle.close()
    return Outcome(result=summary.as_dict())


def import_job_list(*, project: Project, limit: int = 20) -> QuerySet[ImportJob]:
    """The project's most recent import jobs, newest first."""
    return ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at")[:limit]

"""Exports as background jobs: a lead starts one, the job lifecycle (``pipeline.jobs``) runs
``export_job_work``, which stores a zip.

The job row (``ReleaseJob`` of kind ``export``) names its artifact only in the statement that marks it
done, and the zip is built in a temporary folder and stored only once complete, so a failed or killed
export never leaves a partial artifact behind. Re-running a job redoes the whole export, which is
deterministic, and stores it under the same name (replacing what an interrupted store may have left).
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.models import Project, ReleaseJob
from pipeline.jobs.lifecycle import Outcome, Progress, job_create, job_get_for_lead

from .service import FORMATS, release_export, release_question_count

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed, so that the same export gives the same zip bytes


def release_export_start(*, project: Project, user: Any, fmt: str) -> ReleaseJob:
    """Create a queued export job and queue its run after commit. The caller checked that ``user`` leads."""
    if fmt not in FORMATS:
        raise ApplicationError(f"Unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}.", field="format")
    return job_create(
        model=ReleaseJob,
        project=project,
        user=user,
        kind=ReleaseJob.Kind.EXPORT,
        format=fmt,
        total=release_question_count(project=project),
    )


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


def export_job_work(*, job: ReleaseJob, progress: Progress) -> Outcome:
    """The export job's work (``pipeline.kinds``): export the project in the job's format to a zip in
    a temporary folder, then store it as ``releases/<slug>-export-<id>-<format>.zip``.

    The export reads from one read-only snapshot (``release_export``); its progress goes through
    ``progress`` only (the runner writes it on a connection of its own). The stored name is the job's own,
    so a re-run replaces the file instead of adding one; the row names it when the job is marked done.
    """
    project = job.project
    progress(0, release_question_count(project=project))
    with tempfile.TemporaryDirectory(prefix="export-") as tmp:
        folder = Path(tmp) / "release"
        manifest = release_export(project=project, out_dir=folder, fmt=job.format, progress=progress)
        archive = Path(tmp) / "release.zip"
        zip_folder(folder=folder, target=archive)
        storage = job.artifact.storage
        name = job.artifact.field.generate_filename(job, f"{project.slug}-export-{job.pk}-{job.format}.zip")
        storage.delete(name)  # what an earlier, interrupted run of this job stored (if anything)
        with open(archive, "rb") as fh:
            stored = storage.save(name, File(fh, name=name))
    questions = manifest["counts"]["total"]["questions"]
    progress(questions, questions)
    return Outcome(
        result={"counts": manifest["counts"], "files": manifest["files"], "code_version": manifest["code_version"]},
        fields={"artifact": stored},
    )


def release_export_jobs(*, project: Project, limit: int = 50) -> list[ReleaseJob]:
    """Past exports of ``project``, newest first, each with its ``number`` in the project (the
    first export is #1; the job's primary key counts every project's jobs of every kind)."""
    return list(
        ReleaseJob.objects.filter(project=project, kind=ReleaseJob.Kind.EXPORT)
        .select_related("project", "created_by")
        .annotate(number=Window(RowNumber(), order_by=F("pk").asc()))
        .order_by("-created_at", "-pk")[:limit]
    )


def release_export_job_get_for_lead(*, user: Any, job_id: int, slug: str | None = None) -> ReleaseJob:
    """The export job if ``user`` leads its project: non-members get NotFoundError, annotators PermissionDeniedError."""
    job = job_get_for_lead(model=ReleaseJob, user=user, job_id=job_id)
    if job.kind != ReleaseJob.Kind.EXPORT or (slug is not None and job.project.slug != slug):
        raise NotFoundError("Export not found.")
    job.number = ReleaseJob.objects.filter(  # type: ignore[attr-defined]
        project_id=job.project_id, kind=ReleaseJob.Kind.EXPORT, pk__lte=job.pk
    ).count()
    return job


def release_export_download_get(*, user: Any, job_id: int) -> ReleaseJob:
    """The finished export job whose artifact ``user`` may download (leads only)."""
    job = release_export_job_get_for_lead(user=user, job_id=job_id)
    if job.status != ReleaseJob.Status.DONE or not job.artifact:
        raise ConflictError("This export has not finished.", extra={"status": job.status})
    return job

"""Every kind of background job: its table and its work function. A new kind is one line here.

The table is installed in the registry of ``pipeline.jobs`` (``job_kinds_install``) on import, which
``pipeline.apps`` does when Django starts.

A work function is called as ``work(job=..., progress=..., **options)`` by ``pipeline.jobs.runner``
once the job is claimed, and returns an ``Outcome``. Its contract:

* it is idempotent: a re-run (after a failure, or after its worker died at any point) does only the
  missing work, or redoes all of it, and never leaves duplicate rows or a partial file behind;
* it reports progress through ``progress(processed, total)`` (cheap; the runner writes it);
* it never writes the job's row: finishing and failing are the lifecycle's (``pipeline.jobs.lifecycle``);
* it raises on failure; the runner records the reason on the job.
"""

from __future__ import annotations

from annotation.models import AssistJob, ImportJob, MemberJob, ReleaseJob
from pipeline.analytics.stored import analysis_figures_job_work, progress_figures_job_work
from pipeline.assist.service import suggestions_job_work
from pipeline.ingest.jobs import import_job_work
from pipeline.jobs.kinds import JobKind, job_kinds_install
from pipeline.members import members_job_work
from pipeline.quality.figures import quality_figures_job_work
from pipeline.release.export.jobs import export_job_work
from pipeline.release.postprocess import postprocess_job_work
from pipeline.release.short_answers.service import short_answers_job_work

job_kinds_install(
    (
        JobKind(ImportJob.kind, ImportJob, import_job_work),
        JobKind(MemberJob.kind, MemberJob, members_job_work),
        JobKind(ReleaseJob.Kind.POSTPROCESS, ReleaseJob, postprocess_job_work, {"kind": ReleaseJob.Kind.POSTPROCESS}),
        JobKind(
            ReleaseJob.Kind.SHORT_ANSWERS, ReleaseJob, short_answers_job_work, {"kind": ReleaseJob.Kind.SHORT_ANSWERS}
        ),
        JobKind(ReleaseJob.Kind.EXPORT, ReleaseJob, export_job_work, {"kind": ReleaseJob.Kind.EXPORT}),
        JobKind(AssistJob.kind, AssistJob, suggestions_job_work),
        JobKind(
            ReleaseJob.Kind.ANALYSIS_FIGURES,
            ReleaseJob,
            analysis_figures_job_work,
            {"kind": ReleaseJob.Kind.ANALYSIS_FIGURES},
        ),
        JobKind(
            ReleaseJob.Kind.PROGRESS_FIGURES,
            ReleaseJob,
            progress_figures_job_work,
            {"kind": ReleaseJob.Kind.PROGRESS_FIGURES},
        ),
        JobKind(
            ReleaseJob.Kind.QUALITY_FIGURES,
            ReleaseJob,
            quality_figures_job_work,
            {"kind": ReleaseJob.Kind.QUALITY_FIGURES},
        ),
    )
)

"""The quality page's figures, computed by a job and read from a table (docs/quality.md, "Leads").

At ScreenQA size (1,000 annotators, 428k assignments) computing every member's figures took seconds
(``quality_report``: medians over every assignment, agreement over every validation/test question),
and a lead opens the quality page dozens of times a day. So the figures are computed by the
``quality-figures`` job (``pipeline.jobs``, the one job lifecycle; a ``ReleaseJob`` of that kind) into
``AnnotatorFigures`` rows, one per member and stage (and one over every stage), each with the time it
was computed; the page and the API read those rows, sorted, searched and paginated by the database.

When the figures are refreshed (the one rule of stored figures, shared with the analysis and project pages'
snapshots: ``pipeline.jobs.lifecycle.stored_figures_freshness``):

* on the first view of a project that has none, in the request (a project's first figures);
* when a view finds them older than ``SCREENQA_STORED_FIGURES_MAX_AGE`` seconds, a job is queued
  (nobody's, unless one is alive already) and the page shows the figures it has, with the time they
  were computed, until the job has stored new ones;
* when a lead asks for it (the page's *Refresh* button, ``POST .../quality/refresh/``).

What is read live on every view, for the members of the page only: their standings (status, reason,
the last qualification attempt), so a lead's pause or reinstate shows at once. Sorting by standing uses
the status stored with the figures.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Max, QuerySet
from django.db.models.functions import Lower
from django.utils import timezone

from annotation.exceptions import ApplicationError
from annotation.models import AnnotatorFigures as FiguresRow
from annotation.models import Membership, Project, ReleaseJob, Stage, Standing
from pipeline.jobs.lifecycle import Freshness, Outcome, Progress, job_start_once, stored_figures_freshness
from pipeline.stages import stage_filter, stages

from .report import SORT_KEYS, AnnotatorFigures, _add_standings, agreement_by_user, quality_report

STATUS_ORDER = ["paused", "not_qualified", "qualifying", "active", ""]
# ``?sort=`` key -> the column of ``AnnotatorFigures`` (the model) that sorts it.
SORT_COLUMNS: dict[str, Any] = {
    "username": Lower("username"),
    "status": "status_rank",
    "qualification": "qualification_score",
    "control": "control_accuracy",
    "agreement": "agreement",
    "accepted": "reviews_accepted",
    "rejected": "reviews_rejected",
    "invalid": "invalid_rate",
    "median": "median_seconds",
    "submitted": "submitted",
    "skips": "skips",
}
assert set(SORT_COLUMNS) == set(SORT_KEYS)
COPIED = (
    "control_correct",
    "control_items",
    "agreement_agreed",
    "agreement_answers",
    "review_agreement_agreed",
    "review_agreement_compared",
    "reviews_accepted",
    "reviews_rejected",
    "questions_written",
    "questions_flagged",
    "questions_flagged_pass2",
    "questions_faulted",
    "submitted",
    "skips",
    "median_seconds",
)


def _row(project: Project, stage: str, figures: AnnotatorFigures, now: datetime) -> FiguresRow:
    return FiguresRow(
        project=project,
        user_id=figures.user_id,
        stage=stage,
        username=figures.username,
        role=figures.role,
        status=figures.status,
        status_rank=STATUS_ORDER.index(figures.status),
        qualification_score=figures.qualification_score,
        control_accuracy=figures.control_accuracy,
        agreement=figures.agreement,
        review_agreement=figures.review_agreement,
        invalid_rate=figures.invalid_rate,
        computed_at=now,
        **{name: getattr(figures, name) for name in COPIED},
    )


def quality_figures_refresh(*, project: Project, progress: Progress | None = None) -> dict[str, Any]:
    """Compute every member's figures over every stage and in each stage, and store them in place of the
    project's old ones (one transaction: a reader sees the old rows or the new, never a mix). Agreement is
    computed once for the two reports that show it. Idempotent."""
    now = timezone.now()
    names = ["", *stages()]
    agreement = agreement_by_user(project=project)
    rows: list[FiguresRow] = []
    for done, stage in enumerate(names):
        shown = agreement if stage in ("", Stage.ANSWERS) else None
        rows += [_row(project, stage, f, now) for f in quality_report(project=project, stage=stage, agreement=shown)]
        if progress is not None:
            progress(done + 1, len(names))
    with transaction.atomic():
        FiguresRow.objects.filter(project=project).delete()
        FiguresRow.objects.bulk_create(rows, batch_size=2000)
    return {"rows": len(rows), "members": len(rows) // len(names), "computed_at": now.isoformat()}


def quality_figures_job_work(*, job: ReleaseJob, progress: Progress, **options: Any) -> Outcome:
    """The ``quality-figures`` job: ``quality_figures_refresh`` (it redoes all of it: idempotent)."""
    return Outcome(quality_figures_refresh(project=job.project, progress=progress))


def quality_figures_start(*, project: Project, user: Any) -> ReleaseJob:
    """Queue a refresh of the figures (the caller checked that ``user`` leads ``project``; ``None``: a view's
    automatic refresh); the one alive already if there is one (a second click starts nothing)."""
    return job_start_once(model=ReleaseJob, project=project, user=user, kind=ReleaseJob.Kind.QUALITY_FIGURES)


def quality_figures_computed_at(*, project: Project) -> datetime | None:
    """When the stored figures were computed (``None``: never)."""
    found: datetime | None = FiguresRow.objects.filter(project=project).aggregate(at=Max("computed_at"))["at"]
    return found


def quality_figures_current(*, project: Project) -> Freshness:
    """Make sure the project has figures and that they are being refreshed when old (the one rule of stored
    figures, ``stored_figures_freshness``; the module's docstring). Two queries when the figures are fresh."""

    def compute() -> datetime:
        quality_figures_refresh(project=project)
        computed_at = quality_figures_computed_at(project=project)
        assert computed_at is not None
        return computed_at

    return stored_figures_freshness(
        computed_at=quality_figures_computed_at(project=project),
        compute=compute,
        refresh=lambda: quality_figures_start(project=project, user=None),
    )


def quality_figures_rows(
    *, project: Project, stage: str | None = None, sort: str = "username", search: str = ""
) -> QuerySet[FiguresRow]:
    """The stored figures of the project's members in ``stage`` (or over every stage), sorted by a column
    of ``SORT_KEYS`` (``-``: descending; blank figures last either way, then by name), optionally only
    the members whose name contains ``search``. A queryset: the caller paginates it."""
    stage = stage_filter(stage)
    key = sort.removeprefix("-")
    if key not in SORT_COLUMNS:
        raise ApplicationError(f"Unknown sort {sort!r}; one of {', '.join(SORT_KEYS)}.", field="sort")
    column = SORT_COLUMNS[key]
    expression = F(column) if isinstance(column, str) else column
    ordered = expression.desc(nulls_last=True) if sort.startswith("-") else expression.asc(nulls_last=True)
    members = Membership.objects.filter(project=project).values("user_id")
    rows = FiguresRow.objects.filter(project=project, stage=stage or "", user_id__in=members)
    if search:
        rows = rows.filter(username__icontains=search)
    return rows.order_by(ordered, Lower("username"), "user_id")


def figures_with_standings(*, project: Project, rows: list[FiguresRow], stage: str | None = None) -> list[Any]:
    """The stored figures of ``rows`` as the report's ``AnnotatorFigures``, with their standings (and last
    qualification attempts) read now: two queries, whatever the page's size."""
    stage = stage_filter(stage)
    found = {
        r.user_id: AnnotatorFigures(r.user_id, r.username, r.role, **{n: getattr(r, n) for n in COPIED}) for r in rows
    }
    if found:

        def scoped(qs: QuerySet[Any], *, stage_field: str = "stage", user_field: str = "user_id") -> QuerySet[Any]:
            qs = qs.filter(**{f"{user_field}__in": list(found)})
            return qs.filter(**{stage_field: stage}) if stage else qs

        _add_standings(found, scoped(Standing.objects.filter(project=project)), project=project, scoped=scoped)
    for figures, row in zip(found.values(), rows, strict=True):
        figures.computed_at = row.computed_at  # type: ignore[attr-defined]
    return list(found.values())

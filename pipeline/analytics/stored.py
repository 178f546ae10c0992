"""Whole-project figures a page reads from a snapshot, computed by a job (docs/analytics.md, "Stored figures").

At ScreenQA size some pages aggregate every screen, question, answer or assignment of the project on each
view, in seconds: the analysis page (the papers' figures, 3-4.6 s at full size) and the project page (the
stage funnel, the answers per split and the per-annotator counts, 2-2.6 s). Each is a kind of snapshot
(``SNAPSHOTS``): a function that computes the figures, kept in one ``FiguresSnapshot`` row per project and
kind with the time it was computed, and the job kind that refreshes it (the one job lifecycle,
``pipeline.jobs``; a ``ReleaseJob``). When they are computed is the one rule of stored figures, shared with
the quality page's (``pipeline.quality.figures``): ``pipeline.jobs.lifecycle.stored_figures_freshness``:

* on the first view of a project that has none, they are computed in the request;
* a view that finds them older than ``SCREENQA_STORED_FIGURES_MAX_AGE`` seconds queues the job (unless one
  is alive; nobody's job, ``created_by`` empty) and shows what it has, with the time, until the job has
  stored new ones;
* a lead may ask for a refresh (``snapshot_start``: the analysis page's *Compute again*, its API twin).

A kind may be read live below a size (``live``: a project with fewer screens than
``SCREENQA_STORED_FIGURES_MIN_SCREENS`` is computed on each view, in milliseconds, so that a small project's
pages show every submit at once). A snapshot this code cannot read back (written by an older release whose
classes changed) is computed again, as if there were none.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from annotation.models import FiguresSnapshot, Project, ReleaseJob, Screen
from annotation.selectors.assignments import assignment_counts_by_annotator
from pipeline.jobs.lifecycle import Outcome, Progress, job_start_once, stored_figures_freshness
from pipeline.stages.not_answerable import not_answerable_default_size
from pipeline.stages.progress import ProjectProgress, project_progress

from .figures import ProjectAnalytics, analytics_project

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProgressFigures:
    """The project page's whole-project figures: the progress with its counts made (the funnel, screens by
    state, excluded by reason, answers per split, questions the pool cannot finish) and the per-annotator
    counts (without the leases held now, which the page reads live); and the actions page's counts of
    not-answerable questions per split."""

    progress: ProjectProgress
    people: list[dict[str, Any]]  # empty when counted live (the page counts them for leads only)
    # The actions page's not-answerable sample (``not_answerable_default_size``); ``None`` when counted live
    # (and in a snapshot stored before it was added: the page counts it then)
    not_answerable: dict[str, Any] | None = None


def _analysis(project: Project) -> ProjectAnalytics:
    figures = analytics_project(project=project)
    # The funnel (``ProjectProgress``) counts lazily: counted now, the snapshot holds the numbers (a page
    # reading it must never count the project's rows again).
    figures.funnel.steps()
    return figures


def _progress(project: Project) -> ProgressFigures:
    progress = project_progress(project=project)
    progress.steps(), progress.excluded, progress.answers_by_split, progress.stuck  # counted now (see above)
    return ProgressFigures(
        progress=progress,
        people=assignment_counts_by_annotator(project=project),
        not_answerable=not_answerable_default_size(project=project),
    )


def _progress_live(project: Project) -> ProgressFigures:
    """A small project's: the progress counting lazily, only what the page shows (no per-annotator counts)."""
    return ProgressFigures(progress=project_progress(project=project), people=[])


@dataclass(frozen=True)
class Snapshot:
    kind: str  # ``FiguresSnapshot.kind``
    job: str  # the ``ReleaseJob`` kind that refreshes it
    compute: Callable[[Project], Any]
    holds: type  # what ``compute`` returns (a snapshot read back as anything else is computed again)
    # For a project under SCREENQA_STORED_FIGURES_MIN_SCREENS, what is computed on each view instead (None:
    # always the snapshot)
    live: Callable[[Project], Any] | None = None


SNAPSHOTS: dict[str, Snapshot] = {
    s.kind: s
    for s in (
        Snapshot("analysis", ReleaseJob.Kind.ANALYSIS_FIGURES, _analysis, ProjectAnalytics),
        Snapshot("progress", ReleaseJob.Kind.PROGRESS_FIGURES, _progress, ProgressFigures, live=_progress_live),
    )
}


@dataclass(frozen=True)
class Stored:
    figures: Any
    computed_at: datetime
    refreshing: bool  # a job is computing them again now
    live: bool = False  # computed for this view (a small project), not read from a snapshot


def snapshot_refresh(*, project: Project, kind: str, progress: Progress | None = None) -> dict[str, Any]:
    """Compute the project's figures of ``kind`` and store them in place of the old ones. Idempotent."""
    snapshot = SNAPSHOTS[kind]
    if progress is not None:
        progress(0, 1)
    now = timezone.now()
    figures = snapshot.compute(project)
    FiguresSnapshot.objects.update_or_create(
        project=project,
        kind=kind,
        defaults={"computed_at": now, "data": pickle.dumps(figures, protocol=pickle.HIGHEST_PROTOCOL)},
    )
    if progress is not None:
        progress(1, 1)
    return {"kind": kind, "computed_at": now.isoformat()}


def analysis_figures_job_work(*, job: ReleaseJob, progress: Progress, **options: Any) -> Outcome:
    """The ``analysis-figures`` job: ``snapshot_refresh`` of the analysis (idempotent)."""
    return Outcome(snapshot_refresh(project=job.project, kind="analysis", progress=progress))


def progress_figures_job_work(*, job: ReleaseJob, progress: Progress, **options: Any) -> Outcome:
    """The ``progress-figures`` job: ``snapshot_refresh`` of the project page's figures (idempotent)."""
    return Outcome(snapshot_refresh(project=job.project, kind="progress", progress=progress))


def snapshot_start(*, project: Project, kind: str, user: Any) -> ReleaseJob:
    """Queue a refresh of ``kind`` (the caller checked that ``user`` may; ``None``: a view's automatic
    refresh); the job alive already if there is one (a second click starts nothing)."""
    return job_start_once(model=ReleaseJob, project=project, user=user, kind=SNAPSHOTS[kind].job)


def _read(project: Project, kind: str) -> tuple[Any, datetime] | None:
    row = FiguresSnapshot.objects.filter(project=project, kind=kind).values_list("data", "computed_at").first()
    if row is None:
        return None
    try:
        figures = pickle.loads(bytes(row[0]))  # noqa: S301 - the product's own snapshot (the module's docstring)
    except Exception:  # a snapshot of classes that have changed since: computed again
        logger.warning("the %s snapshot of %s cannot be read back; computing it again", kind, project.slug)
        return None
    if not isinstance(figures, SNAPSHOTS[kind].holds):
        return None
    return figures, row[1]


def snapshot_current(*, project: Project, kind: str) -> Stored:
    """The project's figures of ``kind`` as last stored, computed now if there are none (or live, for a
    small project when the kind allows it), and being refreshed when old (the module's docstring). Two
    queries when the snapshot is fresh."""
    snapshot = SNAPSHOTS[kind]
    small = settings.SCREENQA_STORED_FIGURES_MIN_SCREENS
    if snapshot.live and small and not Screen.objects.filter(project=project).order_by()[small - 1 :].exists():
        return Stored(snapshot.live(project), timezone.now(), refreshing=False, live=True)
    found = _read(project, kind)

    def compute() -> datetime:
        nonlocal found
        snapshot_refresh(project=project, kind=kind)
        found = _read(project, kind)
        assert found is not None
        return found[1]

    freshness = stored_figures_freshness(
        computed_at=None if found is None else found[1],
        compute=compute,
        refresh=lambda: snapshot_start(project=project, kind=kind, user=None),
    )
    assert found is not None
    return Stored(found[0], freshness.computed_at, refreshing=freshness.refreshing)

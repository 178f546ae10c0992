"""The analysis page's figures, computed by a job and read from a snapshot (docs/analytics.md, "Stored").

At ScreenQA size the papers' figures aggregate every answer, question and assignment of the project
(``analytics_project``: 3-4.6 s on PostgreSQL at full size), and a lead opens the page often. So the
figures are computed by the ``analysis-figures`` job (the one job lifecycle, ``pipeline.jobs``; a
``ReleaseJob`` of that kind) into one ``FiguresSnapshot`` row per project, with the time they were
computed; the page and the API read the snapshot. The same rules as the quality page's figures
(``pipeline.quality.figures``):

* on the first view of a project that has none, they are computed in the request;
* a view that finds them older than ``SCREENQA_QUALITY_FIGURES_MAX_AGE`` seconds queues the job (unless
  one is alive) and shows what it has, with the time, until the job has stored new ones;
* a lead may ask for a refresh (*Compute again*, ``POST .../analysis/refresh/``).

A snapshot this code cannot read back (written by an older release whose classes changed) is computed
again, as if there were none.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import FiguresSnapshot, Project, ReleaseJob
from pipeline.jobs.lifecycle import Outcome, Progress, job_create, jobs_alive

from .figures import ProjectAnalytics, analytics_project

logger = logging.getLogger(__name__)
KIND = "analysis"


@dataclass(frozen=True)
class Stored:
    figures: ProjectAnalytics
    computed_at: datetime
    refreshing: bool  # a job is computing them again now


def analysis_refresh(*, project: Project, progress: Progress | None = None) -> dict[str, Any]:
    """Compute the project's analysis and store it in place of the old one. Idempotent."""
    if progress is not None:
        progress(0, 1)
    now = timezone.now()
    figures = analytics_project(project=project)
    # The funnel (``ProjectProgress``) counts lazily: counted now, the snapshot holds the numbers (a page
    # reading it must never count the project's rows again).
    figures.funnel.steps()
    FiguresSnapshot.objects.update_or_create(
        project=project,
        kind=KIND,
        defaults={"computed_at": now, "data": pickle.dumps(figures, protocol=pickle.HIGHEST_PROTOCOL)},
    )
    if progress is not None:
        progress(1, 1)
    return {"computed_at": now.isoformat(), "annotators": len(figures.annotators)}


def analysis_figures_job_work(*, job: ReleaseJob, progress: Progress, **options: Any) -> Outcome:
    """The ``analysis-figures`` job: ``analysis_refresh`` (it redoes all of it: idempotent)."""
    return Outcome(analysis_refresh(project=job.project, progress=progress))


def _jobs(project: Project) -> QuerySet[ReleaseJob]:
    return ReleaseJob.objects.filter(project=project, kind=ReleaseJob.Kind.ANALYSIS_FIGURES)


def analysis_start(*, project: Project, user: Any) -> ReleaseJob:
    """Queue a refresh (the caller checked that ``user`` leads ``project``); the job alive already if
    there is one (a second click starts nothing)."""
    alive = jobs_alive(_jobs(project)).order_by("-pk").first()
    if alive is not None:
        return alive
    return job_create(model=ReleaseJob, project=project, user=user, kind=ReleaseJob.Kind.ANALYSIS_FIGURES)


def _read(project: Project) -> tuple[ProjectAnalytics, datetime] | None:
    row = FiguresSnapshot.objects.filter(project=project, kind=KIND).values_list("data", "computed_at").first()
    if row is None:
        return None
    try:
        figures = pickle.loads(bytes(row[0]))  # noqa: S301 - the product's own snapshot (the module's docstring)
    except Exception:  # a snapshot of classes that have changed since: computed again
        logger.warning("the analysis snapshot of %s cannot be read back; computing it again", project.slug)
        return None
    if not isinstance(figures, ProjectAnalytics):
        return None
    return figures, row[1]


def analysis_current(*, project: Project, user: Any) -> Stored:
    """The project's analysis as last stored, computed now if there is none, and being refreshed when old
    (the module's docstring). Two queries when the snapshot is fresh."""
    found = _read(project)
    if found is None:
        analysis_refresh(project=project)
        found = _read(project)
        assert found is not None
        return Stored(found[0], found[1], refreshing=False)
    figures, computed_at = found
    if (timezone.now() - computed_at).total_seconds() <= settings.SCREENQA_QUALITY_FIGURES_MAX_AGE:
        return Stored(figures, computed_at, refreshing=False)
    analysis_start(project=project, user=user)
    return Stored(figures, computed_at, refreshing=True)

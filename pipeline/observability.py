"""What ``annotation.observability`` cannot know itself: the stages' queue depths, for the metrics scrape."""

from __future__ import annotations

from collections.abc import Iterator

from annotation.models import Project
from pipeline.stages.progress import project_progress


def queue_depths() -> Iterator[tuple[str, str, int]]:
    """``(project slug, stage, units waiting)`` of every project (the progress read: four queries a project)."""
    for project in Project.objects.order_by("slug"):
        for stage, depth in project_progress(project=project).pending.items():
            yield project.slug, stage, depth

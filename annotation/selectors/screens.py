"""Reads of screens. ``screen_payload`` is the wire shape of a screen, used by the
screen API and by every stage's ``next`` payload (one function, one shape)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from annotation.exceptions import NotFoundError
from annotation.models import Candidate, Project, Screen


def screen_get(*, project: Project, rico_id: str) -> Screen:
    screen = Screen.objects.select_related("app", "project").filter(project=project, rico_id=rico_id).first()
    if screen is None:
        raise NotFoundError("Screen not found.")
    return screen


def screen_image_url(*, screen: Screen) -> str:
    return reverse("api-screen-image", kwargs={"slug": screen.project.slug, "rico_id": screen.rico_id})


def screen_overlay_url(*, screen: Screen) -> str:
    return reverse("api-screen-overlay", kwargs={"slug": screen.project.slug, "rico_id": screen.rico_id})


def candidate_payload(candidate: Candidate) -> dict[str, Any]:
    return {
        "vh_index": candidate.vh_index,
        "bounds": [candidate.left, candidate.top, candidate.right, candidate.bottom],
        "text": candidate.text or candidate.content_desc,
        "type": candidate.type,
        "class_name": candidate.class_name,
    }


def screen_payload(*, screen: Screen, candidates: list[Candidate] | None = None) -> dict[str, Any]:
    """``{"rico_id", "app", "image_url", "width", "height", "candidates": [...]}``.

    Pass ``candidates`` when they were prefetched; otherwise they are read in one query.
    """
    if candidates is None:
        candidates = list(Candidate.objects.filter(screen=screen).order_by("vh_index"))
    return {
        "rico_id": screen.rico_id,
        "app": screen.app.package,
        "image_url": screen_image_url(screen=screen),
        "overlay_url": screen_overlay_url(screen=screen),
        "width": screen.width,
        "height": screen.height,
        "candidates": [candidate_payload(c) for c in candidates],
    }

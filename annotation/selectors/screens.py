"""Reads of screens. ``screen_payload`` is the wire shape of a screen, used by the
screen API and by every stage's ``next`` payload (one function, one shape)."""

from __future__ import annotations

from typing import Any

from django.db.models import JSONField, OuterRef, QuerySet, Subquery
from django.db.models.functions import JSONObject
from django.urls import reverse

from annotation.db import backend, compiled
from annotation.exceptions import NotFoundError
from annotation.models import Candidate, Project, Screen
from annotation.vh import vh_nodes


def screen_get(*, project: Project, rico_id: str) -> Screen:
    screen = Screen.objects.select_related("app", "project").filter(project=project, rico_id=rico_id).first()
    if screen is None:
        raise NotFoundError("Screen not found.")
    return screen


def screen_image_url(*, screen: Screen) -> str:
    return reverse("api-screen-image", kwargs={"slug": screen.project.slug, "rico_id": screen.rico_id})


def screen_overlay_url(*, screen: Screen) -> str:
    return reverse("api-screen-overlay", kwargs={"slug": screen.project.slug, "rico_id": screen.rico_id})


def screen_vh_url(*, screen: Screen) -> str:
    return reverse("api-screen-vh", kwargs={"slug": screen.project.slug, "rico_id": screen.rico_id})


def screen_device_width(*, screen: Screen) -> int:
    """The width of the screen's VH device space: the one recorded at import
    (``Screen.device_width``, already turned for a landscape screen); for a screen imported
    before that was recorded, the project's device, turned by 90 degrees when the
    screenshot's orientation differs (as the importer reads it)."""
    if screen.device_width:
        return screen.device_width
    width, height = screen.project.device_width, screen.project.device_height
    if (screen.width > screen.height) != (width > height):
        width, height = height, width
    return width


def screen_vh_nodes(*, screen: Screen) -> dict[str, Any]:
    """``{"rico_id", "width", "height", "nodes": [...]}``: every shown VH node of the screen
    (``annotation.vh.vh_nodes``) in ``vh_index`` order, each ``{"vh_index", "parent_index",
    "bounds", "class_name", "text", "leaf"}``. Computed from the stored VH (no query beyond
    the screen's own); its leaves are the screen's candidates. Not on the ``next`` path: the
    pre-filtering page fetches it through ``vh_url`` (hundreds of nodes, tens of KB)."""
    nodes = vh_nodes(
        screen.vh, image_width=screen.width, image_height=screen.height, device_width=screen_device_width(screen=screen)
    )
    return {
        "rico_id": screen.rico_id,
        "width": screen.width,
        "height": screen.height,
        "nodes": [
            {
                "vh_index": node.vh_index,
                "parent_index": node.parent,
                "bounds": [node.left, node.top, node.right, node.bottom],
                "class_name": node.class_name,
                "text": node.text,
                "leaf": node.leaf,
            }
            for node in nodes
        ],
    }


_CANDIDATE_COLUMNS = ("vh_index", "left", "top", "right", "bottom", "text", "content_desc", "type", "class_name")


def _candidates_build(values: dict[str, Any]) -> QuerySet[Any]:
    return Candidate.objects.filter(screen_id=values["screen_id"]).order_by("vh_index").values_list(*_CANDIDATE_COLUMNS)


def candidates_aggregated() -> bool:
    """Whether the database aggregates a screen's candidates into JSON (``candidates_json``)
    (``annotation.db.backend``); elsewhere they are read separately."""
    return backend.postgresql()


def candidates_json(screen_ref: str) -> Subquery:
    """The candidates of the screen ``OuterRef(screen_ref)`` as one JSON array (objects with
    the payload's columns, in ``vh_index`` order; NULL when none), so that a query that loads
    a screen can bring its candidates along (the lease claim does). Only where
    ``candidates_aggregated()``."""
    from django.contrib.postgres.aggregates import JSONBAgg

    rows = (
        Candidate.objects.filter(screen_id=OuterRef(screen_ref))
        .order_by()
        .values("screen_id")
        .annotate(j=JSONBAgg(JSONObject(**{name: name for name in _CANDIDATE_COLUMNS}), order_by="vh_index"))
        .values("j")
    )
    return Subquery(rows, output_field=JSONField())


def _candidate_row_payload(row: tuple[Any, ...]) -> dict[str, Any]:
    vh_index, left, top, right, bottom, text, content_desc, kind, class_name = row
    return {
        "vh_index": vh_index,
        "bounds": [left, top, right, bottom],
        "text": text or content_desc,
        "type": kind,
        "class_name": class_name,
    }


def screen_payload(*, screen: Screen, candidates: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``{"rico_id", "app", "image_url", "overlay_url", "vh_url", "width", "height", "candidates": [...]}``.

    ``candidates``: as read with the screen (``candidates_json``); otherwise they are read
    in one statement, compiled once (it is on the ``next`` hot path).
    """
    if candidates is not None:
        rows = [tuple(item[name] for name in _CANDIDATE_COLUMNS) for item in candidates]
    else:
        rows = compiled.fetch_all(key="screen-candidates", build=_candidates_build, values={"screen_id": screen.pk})
    return {
        "rico_id": screen.rico_id,
        "app": screen.app.package,
        "image_url": screen_image_url(screen=screen),
        "overlay_url": screen_overlay_url(screen=screen),
        "vh_url": screen_vh_url(screen=screen),
        "width": screen.width,
        "height": screen.height,
        "candidates": [_candidate_row_payload(row) for row in rows],
    }

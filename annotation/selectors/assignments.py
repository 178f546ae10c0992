"""Reads of assignments: an annotator's own work, live leases, daily counts.

A *live* lease is ``status == leased`` with ``lease_expires_at`` in the future. A lease
whose time ran out keeps ``status == leased`` until somebody needs the work (expiry is
reclaimed lazily, see ``annotation.services.assignments``), so "leased" alone does not
mean "held".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotation.db import compiled
from annotation.models import Assignment, AssignmentStatus, PrefilterJudgment, Project


def _open_brief_build(values: dict[str, Any]) -> QuerySet[Any]:
    return (
        Assignment.objects.filter(
            project_id=values["project_id"],
            annotator_id=values["user_id"],
            stage=values["stage"],
            status=AssignmentStatus.LEASED,
        )
        .order_by("created_at", "pk")
        .values_list("pk", "lease_expires_at")
    )


def assignment_open_brief(*, project: Project, user: Any, stage: str) -> tuple[int, datetime] | None:
    """``(id, lease_expires_at)`` of the caller's open assignment for ``stage``: a cheap
    check for the leasing hot path (the full row is read only when there is one). One
    statement, compiled once: it runs on every lease."""
    row = compiled.fetch_one(
        key="open-brief",
        build=_open_brief_build,
        values={"project_id": project.pk, "user_id": user.pk, "stage": stage},
    )
    return (row[0], row[1]) if row is not None else None


def assignment_done_today_counts(*, project: Project, user: Any, now: datetime | None = None) -> dict[str, int]:
    """``{stage: submissions by the caller since midnight (server time zone)}``."""
    now = now or timezone.now()
    midnight = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    rows = (
        Assignment.objects.filter(
            project=project, annotator=user, status=AssignmentStatus.SUBMITTED, submitted_at__gte=midnight
        )
        .values("stage")
        .annotate(n=Count("pk"))
    )
    return {row["stage"]: row["n"] for row in rows}


def assignment_skipped_list(*, project: Project) -> QuerySet[Assignment]:
    """The project's skipped assignments with their reasons, newest first (the skip dialog tells
    annotators the lead reads them)."""
    return (
        Assignment.objects.filter(project=project, status=AssignmentStatus.SKIPPED)
        .select_related("annotator", "screen", "question")
        .defer("draft", "submission", "screen__vh")
        .order_by("-updated_at", "-pk")
    )


def prefilter_note_list(*, project: Project) -> QuerySet[PrefilterJudgment]:
    """Pre-filter judgments that carry a note, newest first."""
    return (
        PrefilterJudgment.objects.filter(screen__project=project)
        .exclude(note="")
        .select_related("annotator", "screen")
        .defer("screen__vh")
        .order_by("-created_at", "-pk")
    )


def assignment_held_by_annotator(*, project: Project) -> dict[int, tuple[str, dict[str, int]]]:
    """Per annotator: ``(username, {stage: leases they hold now})`` (only the live leases are read)."""
    rows = (
        Assignment.objects.filter(project=project, status=AssignmentStatus.LEASED, lease_expires_at__gt=timezone.now())
        .values_list("annotator_id", "annotator__username", "stage")
        .annotate(n=Count("pk"))
        .order_by()
    )
    held: dict[int, tuple[str, dict[str, int]]] = {}
    for user_id, username, stage, n in rows:
        held.setdefault(user_id, (username, {}))[1][stage] = n
    return held


def assignment_counts_by_annotator(*, project: Project) -> list[dict[str, Any]]:
    """Per annotator: submissions per stage, skips and leases held now, busiest first:
    ``[{"username", "user_id", "submitted": {stage: n}, "total", "skipped", "held",
    "held_by_stage": {stage: n}}]``."""
    now = timezone.now()
    rows = (
        Assignment.objects.filter(project=project)
        .values("annotator_id", "annotator__username", "stage")
        .annotate(
            submitted=Count("pk", filter=Q(status=AssignmentStatus.SUBMITTED)),
            skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
            held=Count("pk", filter=Q(status=AssignmentStatus.LEASED, lease_expires_at__gt=now)),
        )
        .order_by()
    )
    people: dict[int, dict[str, Any]] = {}
    for row in rows:
        person = people.setdefault(
            row["annotator_id"],
            {
                "user_id": row["annotator_id"],
                "username": row["annotator__username"],
                "submitted": {},
                "total": 0,
                "skipped": 0,
                "held": 0,
                "held_by_stage": {},
            },
        )
        person["submitted"][row["stage"]] = row["submitted"]
        person["total"] += row["submitted"]
        person["skipped"] += row["skipped"]
        person["held"] += row["held"]
        person["held_by_stage"][row["stage"]] = row["held"]
    return sorted(people.values(), key=lambda p: (-p["total"], p["username"]))

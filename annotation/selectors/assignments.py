"""Reads of assignments: an annotator's own work, live leases, daily counts.

A *live* lease is ``status == leased`` with ``lease_expires_at`` in the future. A lease
whose time ran out keeps ``status == leased`` until somebody needs the work (expiry is
reclaimed lazily, see ``annotation.services.assignments``), so "leased" alone does not
mean "held".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from django.db.models import Count, Model, QuerySet
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import NotFoundError
from annotation.models import App, Assignment, AssignmentStatus, Project, Question, Screen

# What the caller's assignment is loaded with (one statement): the assignment, its project,
# screen (without the view hierarchy, which loads on access), app and question.
_ASSIGNMENT_LOADS: list[tuple[type[Model], list[str]]] = [
    (Assignment, compiled.columns(Assignment)),
    (Project, compiled.columns(Project, "project__")),
    (Screen, compiled.columns(Screen, "screen__", exclude=("vh",))),
    (App, compiled.columns(App, "screen__app__")),
    (Question, compiled.columns(Question, "question__")),
]


def _assignment_get_build(values: dict[str, Any]) -> QuerySet[Any]:
    paths = [path for _, model_paths in _ASSIGNMENT_LOADS for path in model_paths]
    return Assignment.objects.filter(pk=values["assignment_id"], annotator_id=values["user_id"]).values_list(*paths)


def assignment_get_for_user(*, assignment_id: int, user: Any) -> Assignment:
    """The caller's own assignment; anybody else's (or none) is ``NotFoundError``.

    Annotators never learn whether another annotator's assignment exists. Loaded with its
    project, screen (view hierarchy on access), app and question in one statement,
    compiled once: every submit, draft save and reload starts here.
    """
    user_id = getattr(user, "pk", None)
    row = None
    if user_id is not None and isinstance(assignment_id, int):
        row = compiled.fetch_one(
            key="assignment-for-user",
            build=_assignment_get_build,
            values={"assignment_id": assignment_id, "user_id": user_id},
        )
    if row is None:
        raise NotFoundError("Assignment not found.")
    loaded: list[Any] = []
    at = 0
    for model, paths in _ASSIGNMENT_LOADS:
        part = row[at : at + len(paths)]
        at += len(paths)
        loaded.append(compiled.instance_from_row(model, paths, part) if part[0] is not None else None)
    assignment, project, screen, app, question = loaded
    screen.app = app
    assignment.project, assignment.screen, assignment.question = project, screen, question
    return cast(Assignment, assignment)


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


def assignment_double_leases(*, project: Project) -> int:
    """Units that were held by more live leases at one moment than they allow.

    A unit is a screen and stage (capacity 1 for the writing stages, the project's
    ``prefilter_judgments`` for pre-filtering) or a question (capacity ``answers_needed``).
    An assignment holds its unit from ``created_at`` until it ended: its lease expiry
    while leased or expired, else when it was submitted, skipped or released
    (``updated_at``). Used by the benchmark and the concurrency tests; the answer must be 0.
    """
    rows = Assignment.objects.filter(project=project).values_list(
        "stage",
        "screen_id",
        "question_id",
        "question__answers_needed",
        "status",
        "created_at",
        "lease_expires_at",
        "updated_at",
    )
    intervals: dict[tuple[str, int], list[tuple[datetime, datetime]]] = {}
    capacity: dict[tuple[str, int], int] = {}
    for stage, screen_id, question_id, needed, status, created, expires, updated in rows:
        key = ("answers", question_id) if stage == "answers" else (stage, screen_id)
        if stage == "answers":
            capacity[key] = max(1, needed or 0)
        elif stage == "prefilter":
            capacity[key] = project.prefilter_judgments
        else:
            capacity[key] = 1
        end = expires if status in (AssignmentStatus.LEASED, AssignmentStatus.EXPIRED) else min(updated, expires)
        intervals.setdefault(key, []).append((created, end))
    over = 0
    for key, spans in intervals.items():
        events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
        live = peak = 0
        for _, delta in events:  # ends sort before starts at the same instant
            live += delta
            peak = max(peak, live)
        if peak > capacity[key]:
            over += 1
    return over

"""Generic mechanics of an assignment queue: lease, expiry, renewal, drafts, release, skip
and the bookkeeping of an idempotent submit.

Stage rules (what a unit of work is, who may take it, what a submission does) live in
``pipeline.stages``; these services only move an assignment through its states::

    leased --submit--> submitted
    leased --skip----> skipped        (never offered to this annotator again)
    leased --release-> released       (back to the queue, for anybody)
    leased --(lease time runs out, and somebody needs the work)--> expired

Locks: callers hold the lock of the unit (screen, or question for ``answers``) taken
through ``annotation.lock_objects`` before they call the writers that change which
leases are live (``assignment_lease_create``, ``assignment_stale_expire``,
``assignment_renew``), so that counting live leases and writing one is atomic. The
order is the one of ``lock_objects``: screen -> question -> assignment.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, cast

from django.db import DatabaseError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation import observability
from annotation.db import compiled
from annotation.exceptions import ApplicationError, ConflictError
from annotation.lock_objects import assignment_lock
from annotation.models import Assignment, AssignmentStatus, Project
from annotation.permissions import assignment_get_for_annotator

DRAFT_MAX_BYTES = 256 * 1024
SKIP_REASON_MAX = 2000


def lease_expiry(*, project: Project, now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(minutes=project.lease_minutes)


# How a lease can end without a submission (``assignment_leases_end``).
LEASE_ENDINGS = (AssignmentStatus.RELEASED, AssignmentStatus.EXPIRED)


def assignment_leases_end(
    *, leases: QuerySet[Assignment], now: datetime, status: str = AssignmentStatus.RELEASED
) -> int:
    """End every assignment of ``leases`` (a filter naming them) that is still ``leased``;
    returns how many. The one way leases end in bulk: an annotator paused, a member removed, a
    lead freeing one, a screen decided or excluded, leases whose time ran out.

    ``status``: ``released`` gives the work back to the queue (the holder's draft stays on the
    row, as on any release); ``expired`` ends a lease whose time ran out or whose unit left the
    queue. One conditional UPDATE (only rows still ``leased``): idempotent, and it never touches a
    submitted or skipped assignment. Locks: whatever the caller's rule needs (the unit's lock for
    the lazy reclaim, the user's for a removal); this takes none itself.
    """
    if status not in LEASE_ENDINGS:
        raise ValueError(f"A lease ends as one of {LEASE_ENDINGS}, not {status!r}.")
    return leases.filter(status=AssignmentStatus.LEASED).update(status=status, updated_at=now)


def assignment_stale_expire(*, stage: str, unit: dict[str, Any], now: datetime) -> int:
    """Mark the leases of one unit (``unit``: filter keywords naming its assignments, e.g.
    ``{"screen_id": 3}``) whose time ran out as ``expired``; returns how many.

    Caller holds the unit's lock. This is the lazy reclaim: expired work returns to
    the queue the moment somebody asks for it, no periodic job needed.
    """
    run_out = Assignment.objects.filter(stage=stage, lease_expires_at__lte=now, **unit)
    return assignment_leases_end(leases=run_out, now=now, status=AssignmentStatus.EXPIRED)


def assignment_lease_create(
    *, project: Project, user: Any, stage: str, unit: dict[str, Any], now: datetime, **quality: Any
) -> Assignment:
    """A new live lease of one unit for ``user`` (``unit``: the assignment fields naming it,
    its ``screen_id`` always, e.g. ``{"screen_id": 3, "question": q}``; ``quality``: the purpose,
    gold item and attempt of a qualification or control item).

    Caller holds the unit's lock, has checked that the unit is open to ``user`` and has
    marked the unit's run-out leases expired (``assignment_stale_expire``) where it had any;
    the partial unique constraints of ``Assignment`` are the last line of defence.
    """
    lease = Assignment(
        project=project,
        stage=stage,
        annotator=user,
        status=AssignmentStatus.LEASED,
        lease_expires_at=lease_expiry(project=project, now=now),
        **unit,
        **quality,
    )
    created = cast(Assignment, compiled.insert(lease))  # the leasing hot path: built once
    observability.lease_made(stage=stage, purpose=str(lease.purpose))
    return created


def assignment_renew(*, assignment: Assignment, now: datetime) -> Assignment:
    """Give an assignment a fresh lease (status ``leased``, expiry from now).

    Caller holds the unit's lock and has checked the unit is still open to the
    assignment's annotator (it is how an expired, released or skipped assignment is
    resumed by a late submit).
    """
    assignment.status = AssignmentStatus.LEASED
    assignment.lease_expires_at = lease_expiry(project=assignment.project, now=now)
    assignment.save(update_fields=["status", "lease_expires_at", "updated_at"])
    return assignment


def assignment_mark_submitted(*, assignment: Assignment, submission: dict[str, Any], now: datetime) -> Assignment:
    """Record the accepted (normalised) submission; the draft is no longer needed."""
    assignment.status = AssignmentStatus.SUBMITTED
    assignment.submission = submission
    assignment.submitted_at = now
    assignment.draft = {}
    # every submit: one UPDATE built once (``compiled.update``), as ``save(update_fields=...)`` writes it
    if not compiled.update(assignment, ("status", "submission", "submitted_at", "draft", "review_state", "updated_at")):
        raise DatabaseError("Save with update_fields did not affect any rows.")  # as save() says it
    observability.submit_recorded(stage=str(assignment.stage), purpose=str(assignment.purpose))
    return assignment


def assignment_keep_as_draft(*, assignment_id: int, data: Any) -> None:
    """Save rejected submit content as the assignment's draft, in its own transaction.

    Used when a late submit loses the race (409): the content is kept, not lost.
    """
    with transaction.atomic():
        locked = assignment_lock(assignment_id=assignment_id)
        if locked.status == AssignmentStatus.SUBMITTED:
            return
        locked.draft = {"submission": data} if not isinstance(data, dict) else data
        locked.save(update_fields=["draft", "updated_at"])


def _json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode())


@transaction.atomic
def assignment_draft_save(*, assignment_id: int, user: Any, draft: dict[str, Any]) -> Assignment:
    """Store work in progress on the caller's open assignment (replaces the previous draft).

    Allowed until the assignment is submitted, also after its lease expired or it was
    released, so that nothing typed is ever lost (a late submit can still use it).
    Idempotent. Locks the assignment row.
    """
    if not isinstance(draft, dict):
        raise ApplicationError("The draft must be a JSON object.", field="draft")
    if _json_size(draft) > DRAFT_MAX_BYTES:
        raise ApplicationError(f"The draft is larger than {DRAFT_MAX_BYTES // 1024} KB.", field="draft")
    assignment_get_for_annotator(assignment_id=assignment_id, user=user)  # 404 for anybody else's
    assignment = assignment_lock(assignment_id=assignment_id)
    if assignment.status == AssignmentStatus.SUBMITTED:
        raise ConflictError("This assignment is already submitted.", extra={"status": assignment.status})
    assignment.draft = draft
    assignment.save(update_fields=["draft", "updated_at"])
    return assignment


@transaction.atomic
def assignment_release(*, assignment_id: int, user: Any) -> Assignment:
    """Give the work back to the queue (anybody, the caller included, may take it again).

    Idempotent: releasing a released assignment returns it unchanged. Locks the assignment.
    """
    assignment_get_for_annotator(assignment_id=assignment_id, user=user)
    assignment = assignment_lock(assignment_id=assignment_id)
    if assignment.status == AssignmentStatus.RELEASED:
        return assignment
    if assignment.status != AssignmentStatus.LEASED:
        raise ConflictError(f"This assignment is {assignment.status} and cannot be released.")
    return assignment_lease_release(assignment=assignment)


def assignment_lease_release(*, assignment: Assignment) -> Assignment:
    """Give one locked, live lease back to the queue (``assignment_leases_end`` on its row) and
    return it as it now is. Caller holds the assignment's lock and has checked it is leased."""
    now = timezone.now()
    assignment_leases_end(leases=Assignment.objects.filter(pk=assignment.pk), now=now)
    assignment.status, assignment.updated_at = AssignmentStatus.RELEASED, now
    return assignment


@transaction.atomic
def assignment_skip(*, assignment_id: int, user: Any, reason: str) -> Assignment:
    """Decline the work with a reason; it is never offered to the caller again.

    Idempotent: skipping a skipped assignment returns it unchanged. Locks the assignment.
    """
    assignment_get_for_annotator(assignment_id=assignment_id, user=user)  # 404 first: leak nothing
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise ApplicationError("Say why you skip this work.", field="reason")
    if len(reason) > SKIP_REASON_MAX:
        raise ApplicationError(f"The reason is longer than {SKIP_REASON_MAX} characters.", field="reason")
    assignment = assignment_lock(assignment_id=assignment_id)
    if assignment.status == AssignmentStatus.SKIPPED:
        return assignment
    if assignment.status != AssignmentStatus.LEASED:
        raise ConflictError(f"This assignment is {assignment.status} and cannot be skipped.")
    assignment.status = AssignmentStatus.SKIPPED
    assignment.skip_reason = reason
    assignment.save(update_fields=["status", "skip_reason", "updated_at"])
    return assignment


def assignment_expire_leases(*, project: Project | None = None, now: datetime | None = None) -> int:
    """Mark every lease whose time ran out as ``expired`` (what ``next`` does lazily per unit).

    Safe at any time: a lease is only expired by a conditional update on
    ``lease_expires_at <= now``, the same rule as the lazy reclaim.
    """
    now = now or timezone.now()
    qs = Assignment.objects.filter(lease_expires_at__lte=now)
    if project is not None:
        qs = qs.filter(project=project)
    return assignment_leases_end(leases=qs, now=now, status=AssignmentStatus.EXPIRED)

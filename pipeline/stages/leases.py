"""A lead's hold on the queue: the leases held now, freeing one (back to the queue) and handing
one to another member (who finds it as their open item of the stage).

Locks: the unit, then the assignment (``annotation.lock_objects`` order), as a submit does.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.lock_objects import assignment_lock
from annotation.models import Assignment, AssignmentStatus, Membership, Project, Purpose, Standing, StandingStatus
from annotation.services.assignments import assignment_lease_release, lease_expiry

from .base import live_q, qualification_mode, trusted
from .registry import stage_get


def lease_list(*, project: Project) -> QuerySet[Assignment]:
    """The project's live leases (time left), the oldest first, with who holds them: a queryset the
    caller paginates."""
    return (
        Assignment.objects.filter(live_q(timezone.now()), project=project)
        .select_related("annotator", "screen", "question")
        .only(
            "pk",
            "stage",
            "purpose",
            "created_at",
            "lease_expires_at",
            "annotator_id",
            "annotator__username",
            "screen__rico_id",
            "question__text",
        )
        .order_by("created_at", "pk")
    )


def _locked(*, project: Project, assignment_id: Any) -> tuple[Any, Assignment, Any]:
    """The stage, the locked assignment (live lease of ``project``) and its locked unit."""
    row = Assignment.objects.filter(project=project, pk=assignment_id).select_related("project").first()
    if row is None:
        raise NotFoundError("No such lease in this project.")
    stage = stage_get(row.stage)
    unit = stage.unit.lock(assignment=row)
    assignment = assignment_lock(assignment_id=row.pk)
    assignment.project = row.project
    if assignment.status != AssignmentStatus.LEASED or assignment.lease_expires_at <= timezone.now():
        raise ConflictError("This lease is no longer held (submitted, released or run out).")
    return stage, assignment, unit


@transaction.atomic
def lease_free(*, project: Project, assignment_id: Any) -> Assignment:
    """Give a held lease back to the queue (status ``released``; the holder's draft stays on it)."""
    _stage, assignment, _unit = _locked(project=project, assignment_id=assignment_id)
    return assignment_lease_release(assignment=assignment)


@transaction.atomic
def lease_reassign(*, project: Project, assignment_id: Any, user_id: Any) -> Assignment:
    """Hand a held lease to another member, with a fresh lease time.

    The new holder must be allowed the stage (its access rule, e.g. the answer pool), be in good
    standing there, and be someone the unit is open to (never a question's author, never the
    same screen's two writers); the old holder's draft is not passed on. Only real work moves:
    qualification and control items belong to the annotator they were drawn for.
    """
    stage, assignment, unit = _locked(project=project, assignment_id=assignment_id)
    if assignment.purpose != Purpose.WORK:
        raise ApplicationError("Qualification and control items cannot be handed to somebody else: free it instead.")
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise ApplicationError("Choose a member of this project.", field="user")
    user = membership.user
    if user.pk == assignment.annotator_id:
        raise ApplicationError(f"{user.username} holds it already.", field="user")
    stage.check_access(user=user, membership=membership)
    if not trusted(user=user, membership=membership):
        status = Standing.objects.filter(project=project, user=user, stage=stage.name).values_list("status", flat=True)
        status_now = status.first()
        needs_qualification = qualification_mode(stage) == "gold" and status_now is None
        if needs_qualification or status_now not in (None, StandingStatus.ACTIVE):
            raise ApplicationError(f"{user.username} is not qualified or is paused in this stage.", field="user")
    now = timezone.now()
    if not stage.open_to(unit=unit, user=user, now=now, own=assignment):
        raise ApplicationError(f"This item is not open to {user.username} (the stage's rules).", field="user")
    assignment.annotator = user
    assignment.lease_expires_at = lease_expiry(project=project, now=now)
    assignment.draft = {}
    try:
        with transaction.atomic():
            assignment.save(update_fields=["annotator", "lease_expires_at", "draft", "updated_at"])
    except IntegrityError as exc:  # the constraints of ``Assignment``: already holds one like it
        raise ApplicationError(f"{user.username} already works on this item.", field="user") from exc
    return assignment

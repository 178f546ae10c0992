"""The pipeline engine: every stage as a concurrency-safe assignment queue.

These are the services the REST API (``pipeline.apis.engine``), the browser workspace and
the scripted crowd call (docs/engine.md). The engine knows no stage by name: it asks the
stage's definition (``pipeline.stages.registry``) and its unit (``pipeline.stages.units``).

Concurrency, in short:

* leasing takes the caller's user row lock (one request of one annotator at a time),
  then the first free unit with ``SELECT ... FOR UPDATE SKIP LOCKED`` (from a random
  pivot in a shuffled queue, see ``_claim``),
  re-checks the unit with a fresh statement under that lock and writes the lease;
* a submit locks the unit (screen, or question for ``answers``), then the assignment,
  and applies the stage transition in the same transaction;
* partial unique and check constraints on ``Assignment`` / ``Question`` / ``Answer``
  hold the invariants even if a code path forgot a check.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.lock_objects import assignment_lock, queue_claim, standing_lock, user_lock
from annotation.models import (
    QUEUE_KEY_SPAN,
    Assignment,
    AssignmentStatus,
    ControlOutcome,
    Membership,
    Project,
    Purpose,
    ReviewState,
    Standing,
    StandingStatus,
)
from annotation.permissions import assignment_get_for_annotator, member_get
from annotation.selectors.assignments import assignment_done_today_counts, assignment_open_brief
from annotation.selectors.screens import candidates_aggregated, candidates_json, screen_payload
from annotation.services.assignments import (
    assignment_expire_leases as services_expire_leases,
)
from annotation.services.assignments import (
    assignment_keep_as_draft,
    assignment_lease_create,
    assignment_mark_submitted,
    assignment_renew,
    assignment_stale_expire,
)
from annotation.services.assignments import (
    assignment_release as services_release,
)
from annotation.services.assignments import (
    assignment_skip as services_skip,
)
from pipeline.assist.service import assist_after_submit
from pipeline.quality import mine as quality_mine
from pipeline.quality.assist_use import assist_recorded
from pipeline.quality.gold import gold_exposed, gold_pick
from pipeline.quality.standing import (
    WORK,
    Plan,
    StandingBrief,
    gold_left,
    gold_submitted,
    plan_next,
    qualification_check,
    skip_recorded,
    standing_read,
    work_refusal,
    work_submitted,
)
from pipeline.stages.base import StageDefinition, stale_q
from pipeline.stages.registry import stage_get, stages
from pipeline.stages.units import Claimed
from pipeline.stages.wire import AssignmentResultSerializer, render

# Under heavy contention a locked unit can turn out taken (its lease committed after our
# snapshot); we then try the next one, a bounded number of times.
LEASE_ATTEMPTS = 16

_MEMBER = compiled.Load(Membership, plain=True)
_PROJECT = compiled.Load(Project, "project__", plain=True)


@dataclass(frozen=True)
class Work:
    """An assignment handed to its annotator by ``next``, with its screen's candidates when
    the lease claim read them along (``None``: the payload reads them)."""

    assignment: Assignment
    candidates: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class MemberContext:
    """The project, the caller's membership (``None``: a site admin) and the brief
    ``(id, lease_expires_at)`` of their open assignment of the stage (``None``: none)."""

    project: Project
    membership: Membership | None
    open: tuple[int, datetime] | None
    standing: StandingBrief | bool | None = True  # ``True``: not read


def _held(*, project: Any, user: Any, stage: str) -> QuerySet[Assignment]:
    """The caller's open (leased) assignments of ``stage`` in ``project`` (at most one), found through
    the partial index ``assignment_open`` of leased rows whatever the planner's statistics or the plan:
    the status is written into the SQL (``compiled.Inline``), so a generic plan can use it too. Through
    any other index (the caller's assignments, the project's, every leased one) it was planned, on
    statistics where the caller's share of the table is large, as a walk that read all of them
    (``tests/pipeline/engine/test_claim_plan.py``)."""
    return Assignment.objects.filter(
        annotator=user, stage=stage, project=project, status=compiled.Inline(AssignmentStatus.LEASED)
    )


def _member_open_build(stage: str) -> compiled.Build:
    def build(values: dict[str, Any]) -> QuerySet[Any]:
        mine = _held(project=OuterRef("project_id"), user=OuterRef("user_id"), stage=stage).order_by("created_at", "pk")
        standing = Standing.objects.filter(project_id=OuterRef("project_id"), user_id=OuterRef("user_id"), stage=stage)
        return (
            Membership.objects.filter(project__slug=values["slug"], user_id=values["user_id"])
            .annotate(
                open_id=Subquery(mine.values("pk")[:1]),
                open_expires=Subquery(mine.values("lease_expires_at")[:1]),
                standing_status=Subquery(standing.values("status")[:1]),
                standing_attempt=Subquery(standing.values("attempt")[:1]),
                standing_items=Subquery(standing.values("items_done")[:1]),
                standing_controls=Subquery(standing.values("controls_done")[:1]),
                standing_evidence=Subquery(standing.values("evidence")[:1]),
                standing_owed=Subquery(standing.values("qualification_owed")[:1]),
            )
            .values_list(
                "open_id",
                "open_expires",
                "standing_status",
                "standing_attempt",
                "standing_items",
                "standing_controls",
                "standing_evidence",
                "standing_owed",
                *_MEMBER.paths,
                *_PROJECT.paths,
            )
        )

    return build


def member_context_get(*, slug: str, user: Any, stage: str) -> MemberContext:
    """The project ``slug``, the caller's membership and open assignment of ``stage``, in one
    query for members. Non-members get ``NotFoundError`` (site admins need no membership:
    two more queries)."""
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    row = compiled.fetch_one(
        key=("member-open", stage), build=_member_open_build(stage), values={"slug": slug, "user_id": user.pk}
    )
    if row is not None:
        membership, project = compiled.load_row((_MEMBER, _PROJECT), row[8:])
        membership.project = project
        standing = StandingBrief(*row[2:8]) if row[2] is not None else None
        return MemberContext(project, membership, (row[0], row[1]) if row[0] is not None else None, standing)
    found = Project.objects.filter(slug=slug).first() if user.is_superuser else None
    if found is None:
        raise NotFoundError("Project not found.")
    return MemberContext(found, None, assignment_open_brief(project=found, user=user, stage=stage))


def _resume_own(*, stage: StageDefinition, current: Assignment, now: datetime) -> Assignment | None:
    """Renew the caller's lease whose time ran out, if nobody reclaimed it meanwhile."""
    stage.unit.lock(assignment=current)
    locked = assignment_lock(assignment_id=current.pk)
    if locked.status != AssignmentStatus.LEASED:
        return None
    current.status = locked.status
    return assignment_renew(assignment=current, now=now)


def _claim_build(stage: StageDefinition, with_candidates: bool, from_pivot: bool = False) -> compiled.Build:
    """The stage's queue as the claim reads it: empty if the caller holds an open assignment of
    the stage (checked in the claim's own statement, after the user lock: see ``_next``),
    with whether the unit has run-out leases, the screen's candidates (``with_candidates``:
    where the database aggregates them) and the unit, its screen and app; ``from_pivot``: only
    the units whose ``queue_key`` is at or after ``values["pivot"]``. Called only to compile
    the claim (the statement is kept)."""
    paths = [path for load in stage.unit.loads for path in load.paths]

    def build(values: dict[str, Any]) -> QuerySet[Any]:
        project, user = values["project"], values["user"]
        # counted, not probed with EXISTS: a LIMIT 1 lets the planner walk any index of one of the
        # conditions (every leased row, the caller's history) hoping to meet a match soon; a count must
        # read every match, so the narrowest index wins (the caller has at most one)
        held = (
            _held(project=project, user=user, stage=stage.name).order_by().values("annotator").annotate(n=Count("pk"))
        )
        queue = (
            stage.queue(project=project, user=user, now=values["now"])
            .alias(held=Coalesce(Subquery(held.values("n"), output_field=IntegerField()), Value(0)))
            .filter(held=0)
        )
        if from_pivot:
            queue = queue.filter(queue_key__gte=values["pivot"])
        # Annotation names that no model of a unit uses for a field or a relation. The run-out
        # lease check is a LIMIT 1 scalar sub-query, not an EXISTS: a generic plan hashed the
        # EXISTS over a sequential scan of every assignment; this one probes the claimed unit's
        # (``Unit.assignments``: through its key, not the index of run-out leases).
        queue = queue.annotate(
            claim_stale=Subquery(stage.unit.assignments(stage.name, stale_q(values["now"])).values("pk")[:1])
        )
        if not with_candidates:
            return queue.values_list("claim_stale", *paths)
        candidates = candidates_json(stage.unit.screen_ref)
        return queue.annotate(claim_candidates=candidates).values_list("claim_stale", "claim_candidates", *paths)

    return build


def _pivot() -> int:
    """Where a claim starts in a shuffled queue: a random key, never predictable from the code."""
    return secrets.randbelow(QUEUE_KEY_SPAN)


def _claim(*, stage: StageDefinition, project: Project, user: Any, now: datetime, tried: list[int]) -> Claimed | None:
    """Lock the next unit of the queue (skip-locked) and load it for the payload, or ``None``.

    A shuffled queue (``Unit.shuffled``: screens and questions) is claimed from a random pivot:
    the first free unit whose ``queue_key`` is at or after it, else (wrapping around) the first
    free unit of the queue. Both are index range scans of the project's waiting units (the
    partial ``*_queue_*`` indexes), so the order work is served in says nothing about it.

    Whether the unit has leases whose time ran out is read with the claim: a lease created
    or renewed after this statement's snapshot expires after ``now``, so this cannot miss
    one, and the common case (none) costs no UPDATE.
    """
    with_candidates = candidates_aggregated()
    build = _claim_build(stage, with_candidates)
    values: dict[str, Any] = {"project": project, "user": user, "now": now}
    inputs = {"project": stage.queue_inputs}
    row: tuple[Any, ...] | None = None
    pivot = _pivot() if stage.unit.shuffled else None
    if pivot is not None:
        from_pivot = {**values, "pivot": pivot}
        build_from = _claim_build(stage, with_candidates, from_pivot=True)
        if not tried:
            row = queue_claim(key=(stage.name, "from"), build=build_from, values=from_pivot, inputs=inputs)
        else:  # a retry under contention: rare, through the ORM
            row = _claim_retry(build_from(from_pivot), tried)
    # Not shuffled, or nothing free at or after the pivot: from the start (a pivot of 0 already
    # was the start: keys are never negative).
    if row is None and pivot != 0:
        if not tried:
            row = queue_claim(key=stage.name, build=build, values=values, inputs=inputs)
        else:
            row = _claim_retry(build(values), tried)
    if row is None:
        return None
    if not with_candidates:
        return stage.unit.claimed(row[1:], stale=bool(row[0]), candidates=None)
    return stage.unit.claimed(row[2:], stale=bool(row[0]), candidates=row[1] or [])


def _claim_retry(queue: QuerySet[Any], tried: list[int]) -> tuple[Any, ...] | None:
    found = queue.exclude(pk__in=tried).select_for_update(skip_locked=True, of=("self",)).first()
    return tuple(found) if found is not None else None


def _still_open(*, stage: StageDefinition, project: Project, user: Any, now: datetime, unit: Any) -> bool:
    """Fresh re-check of a claimed (locked) unit: is it still in the caller's queue?

    A statement of its own (READ COMMITTED: it sees a lease committed after the claim's
    snapshot): the stage's queue restricted to the unit, compiled once."""

    def build(values: dict[str, Any]) -> QuerySet[Any]:
        queue = stage.queue(project=values["project"], user=values["user"], now=values["now"])
        return queue.filter(pk=values["unit_id"])

    return compiled.exists(
        key=("still-open", stage.name),
        build=build,
        values={"project": project, "user": user, "now": now, "unit_id": unit.pk},
        inputs={"project": stage.queue_inputs},
    )


def _lease_gold(*, stage: StageDefinition, project: Project, user: Any, plan: Plan, now: datetime) -> Work | None:
    """A lease of a gold item for a qualification or as a control item, served exactly like real
    work. ``None`` when no gold item is left for the caller: a control item gives way to real work,
    and a qualification is decided on what was done (``qualification_check``).

    A control item is served only when real work waits for the caller too: a lease handed out
    with nothing in their queue (``available`` 0, or after a 204) could only be a control item."""
    if plan.purpose == Purpose.CONTROL and not stage.queue(project=project, user=user, now=now).exists():
        return None
    rules = stage.gold_pick_rules(project=project, user=user, purpose=plan.purpose)
    gold = gold_pick(project=project, stage=stage.name, user=user, **rules)
    if gold is None:
        if plan.purpose == Purpose.QUALIFICATION:
            standing = standing_lock(project_id=project.pk, user_id=user.pk, stage=stage.name)
            waits = standing is not None and qualification_check(
                stage=stage, standing=standing, project=project, now=now
            )
            if standing is not None and standing.status == StandingStatus.NOT_QUALIFIED:
                raise _QualificationDecided
            if waits:
                raise PermissionDeniedError(
                    f"The rest of your qualification set for {stage.label} is not ready yet: its items are still "
                    "being worked on. Try again later.",
                    extra={"waiting_for": "qualification-items"},
                )
            if standing is None or standing.status != StandingStatus.ACTIVE:
                raise PermissionDeniedError(
                    f"Your qualification for {stage.label} is waiting for its result; ask a lead if it does not come."
                )
        return None
    assignment = assignment_lease_create(
        project=project,
        user=user,
        stage=stage.name,
        unit=stage.gold_unit(gold=gold),
        now=now,
        purpose=plan.purpose,
        gold=gold,
        attempt=plan.attempt,
    )
    gold_exposed(gold=gold)
    gold.screen.project = project
    assignment.screen = gold.screen
    return Work(assignment)


def _lease_new(*, stage: StageDefinition, project: Project, user: Any, now: datetime, plan: Plan = WORK) -> Work | None:
    """A lease of the queue head open to ``user`` (``plan.review``: marked for review)."""
    quality = {"review_state": ReviewState.SAMPLED} if plan.review else {}
    tried: list[int] = []
    for _ in range(LEASE_ATTEMPTS):
        claimed = _claim(stage=stage, project=project, user=user, now=now, tried=tried)
        if claimed is None:
            return None
        claimed.screen.project = project
        if _still_open(stage=stage, project=project, user=user, now=now, unit=claimed.unit):
            if claimed.stale:
                assignment_stale_expire(stage=stage.name, unit=stage.unit.of(claimed.unit), now=now)
            assignment = assignment_lease_create(
                project=project, user=user, stage=stage.name, unit=stage.unit.lease(claimed.unit), now=now, **quality
            )
            assignment.screen = claimed.screen  # already loaded: the payload needs no further query
            return Work(assignment, claimed.candidates)
        tried.append(claimed.unit.pk)
    return None


def _plan(
    *,
    stage: StageDefinition,
    project: Project,
    user: Any,
    membership: Membership | None,
    standing: StandingBrief | bool | None,
    now: datetime,
) -> Plan:
    """The quality gate of a new lease (``pipeline.quality.standing.plan_next``); ``standing`` as
    read with the membership, or ``True`` (one query here)."""
    brief = standing_read(project=project, user=user, stage=stage.name) if standing is True else standing
    return plan_next(stage=stage, project=project, user=user, membership=membership, standing=brief or None, now=now)


def assignment_next(*, project: Project, user: Any, stage: str) -> Assignment | None:
    """The caller's open assignment for ``stage``, or a new lease; ``None`` = nothing for them.

    Non-members: ``NotFoundError``; ``answers`` outside the answer pool:
    ``PermissionDeniedError``; unknown stage: ``NotFoundError``. Idempotent while a lease
    is open (asking twice returns the same assignment). A lease whose time ran out but
    that nobody reclaimed is renewed and returned. Locks: user, then (skip-locked) unit.
    """
    definition = stage_get(stage)
    membership = member_get(project=project, user=user)
    work = _next(stage=definition, project=project, membership=membership, user=user)
    return None if work is None else work.assignment


def assignment_next_by_slug(*, slug: str, user: Any, stage: str) -> Work | None:
    """``assignment_next`` for the project ``slug`` (the REST hot path): the project, the
    caller's membership and open assignment are read in one query, and the assignment comes
    with the candidates its claim read (``work_payload``). Same contract, errors and locks."""
    definition = stage_get(stage)
    context = member_context_get(slug=slug, user=user, stage=definition.name)
    return _next(
        stage=definition,
        project=context.project,
        membership=context.membership,
        user=user,
        brief=context.open,
        standing=context.standing,
    )


def _next(
    *,
    stage: StageDefinition,
    project: Project,
    membership: Membership | None,
    user: Any,
    brief: tuple[int, datetime] | bool | None = True,
    standing: StandingBrief | bool | None = True,
) -> Work | None:
    """``brief``, ``standing``: the caller's open assignment and standing in the stage as read just
    before (``True``: not read yet)."""
    stage.check_access(user=user, membership=membership)
    now = timezone.now()
    if brief is True:
        brief = assignment_open_brief(project=project, user=user, stage=stage.name)
    if isinstance(brief, tuple) and brief[1] > now:
        # The hot path of a reload: no lock, no write.
        return Work(_own_open(assignment_id=brief[0], user=user, project=project))
    try:
        with transaction.atomic():
            user_lock(user_id=user.pk, leasing=True)
            try:
                return _next_locked(
                    stage=stage,
                    project=project,
                    membership=membership,
                    user=user,
                    brief=brief,
                    standing=standing,
                    now=now,
                )
            except _QualificationDecided:
                pass  # the decision is kept: this block commits it
    except IntegrityError as exc:  # a constraint caught a race the checks missed: nothing was written
        raise ConflictError("Somebody took this work at the same moment; ask again.") from exc
    # The qualification was decided just now (its gold ran out): ask again on the new standing, which
    # refuses with the plan's words or starts the next attempt.
    return _next(stage=stage, project=project, membership=membership, user=user)


class _QualificationDecided(Exception):
    """``_lease_gold`` decided a qualification that had no gold item left (not qualified): the decision
    must be committed before the caller is refused."""


def _next_locked(
    *,
    stage: StageDefinition,
    project: Project,
    membership: Membership | None,
    user: Any,
    brief: tuple[int, datetime] | bool | None,
    standing: StandingBrief | bool | None,
    now: datetime,
) -> Work | None:
    """``_next`` under the caller's lock, in its transaction."""
    if brief is None:
        plan = _plan(stage=stage, project=project, user=user, membership=membership, standing=standing, now=now)
        if plan.purpose != Purpose.WORK:
            gold = _lease_gold(stage=stage, project=project, user=user, plan=plan, now=now)
            if gold is not None:
                return gold
        # The common case: the caller had nothing open. The claim runs after the user
        # lock, in a statement of its own, so it sees a lease that another request of
        # the same caller committed meanwhile, and then claims nothing.
        leased = _lease_new(stage=stage, project=project, user=user, now=now, plan=plan)
        if leased is not None:
            return leased
    held = assignment_open_brief(project=project, user=user, stage=stage.name)
    if held is None and brief is None:
        return None  # the queue has nothing for the caller
    if held is not None:
        current = _own_open(assignment_id=held[0], user=user, project=project)
        if held[1] > now:
            return Work(current)  # another request of the same caller just leased it
        renewed = _resume_own(stage=stage, current=current, now=now)
        if renewed is not None:
            return Work(renewed)
    plan = _plan(stage=stage, project=project, user=user, membership=membership, standing=standing, now=now)
    if plan.purpose != Purpose.WORK:
        gold = _lease_gold(stage=stage, project=project, user=user, plan=plan, now=now)
        if gold is not None:
            return gold
    return _lease_new(stage=stage, project=project, user=user, now=now, plan=plan)


def _own_open(*, assignment_id: int, user: Any, project: Project) -> Assignment:
    assignment = assignment_get_for_annotator(assignment_id=assignment_id, user=user)
    assignment.screen.project = project  # the payload's URLs need the slug: no extra query
    return assignment


def assignment_submit(*, assignment_id: int, user: Any, data: dict[str, Any]) -> Assignment:
    """Submit the caller's work; validates per stage and moves the unit on, atomically.

    * another user's (or no) assignment: ``NotFoundError``;
    * a bad body: ``ApplicationError(field=...)``, nothing written;
    * the same content again: the same assignment, nothing written (idempotent, compared
      with the normalised ``Assignment.submission``); other content again: ``ConflictError``;
    * the lease ran out (or was released/skipped) but the work is still open to the
      caller: accepted (the lease is renewed first);
    * the work went to somebody else or is finished: ``ConflictError``, and the body is
      kept as the assignment's draft so nothing is lost.

    Locks: the unit (screen, or question for ``answers``), then the assignment.
    """
    found = assignment_get_for_annotator(assignment_id=assignment_id, user=user)
    stage = stage_get(found.stage)
    if not isinstance(data, dict):
        raise ApplicationError("The submission must be a JSON object.", field="body")
    try:
        with transaction.atomic():
            # A gold item's unit belongs to nobody's work: only its assignment is locked.
            unit = stage.unit.lock(assignment=found) if found.purpose == Purpose.WORK else None
            assignment = assignment_lock(assignment_id=assignment_id)
            assignment.project, assignment.screen, assignment.question = found.project, found.screen, found.question
            cleaned = stage.clean(assignment=assignment, data=data)
            if assignment.status == AssignmentStatus.SUBMITTED:
                if assignment.submission == cleaned:
                    return assignment
                raise ConflictError("This assignment is already submitted, with other content.")
            now = timezone.now()
            if assignment.purpose != Purpose.WORK:  # a gold item: scored, nothing of the pipeline moves
                if assignment.status != AssignmentStatus.LEASED:
                    # given back, skipped or run out: already counted (``gold_left``); the same words
                    # as for real work that went to someone else
                    raise ConflictError(
                        "Your lease ended and this work went to someone else (or is complete). "
                        "Your content is kept as this assignment's draft.",
                        extra={"status": assignment.status, "draft_saved": True},
                    )
                # Marked submitted first, so that the last item of a qualification set counts as
                # done and decides the set now (not on the next request, nor with an extra item).
                submitted = assignment_mark_submitted(assignment=assignment, submission=cleaned, now=now)
                gold_submitted(stage=stage, assignment=submitted, cleaned=cleaned, now=now)
                assist_recorded(stage=stage, assignment=submitted, cleaned=cleaned, now=now)
                return submitted
            if assignment.status != AssignmentStatus.LEASED:
                refusal = work_refusal(stage=stage, project=assignment.project, user=user)
                if refusal is not None:  # paused (their leases were released) or not qualified
                    raise PermissionDeniedError(refusal)
                if not stage.open_to(unit=unit, user=user, now=now, own=assignment):
                    raise ConflictError(
                        "Your lease ended and this work went to someone else (or is complete). "
                        "Your content is kept as this assignment's draft.",
                        extra={"status": assignment.status, "draft_saved": True},
                    )
                assignment_stale_expire(stage=stage.name, unit=stage.unit.of(unit), now=now)
                assignment_renew(assignment=assignment, now=now)
            stage.apply(assignment=assignment, unit=unit, cleaned=cleaned, now=now)
            assist_recorded(stage=stage, assignment=assignment, cleaned=cleaned, now=now)
            work_submitted(stage=stage, assignment=assignment, now=now)
            done = assignment_mark_submitted(assignment=assignment, submission=cleaned, now=now)
        stage.after_submit(assignment=done)
        assist_after_submit(assignment=done)
        return done
    except ConflictError:
        assignment_keep_as_draft(assignment_id=assignment_id, data=data)
        raise
    except IntegrityError as exc:
        assignment_keep_as_draft(assignment_id=assignment_id, data=data)
        raise ConflictError(
            "This submission conflicts with another one made at the same moment; it is kept as a draft.",
            extra={"draft_saved": True},
        ) from exc


@transaction.atomic
def assignment_extend(*, assignment_id: int, user: Any) -> Assignment:
    """Renew the caller's open lease for another ``project.lease_minutes``.

    Works while the assignment is ``leased``, also when its time ran out: a lease is only
    taken away under the unit's lock, which this holds (unit, then assignment). An expired,
    released, skipped or submitted assignment is a ``ConflictError``.
    """
    found = assignment_get_for_annotator(assignment_id=assignment_id, user=user)
    stage_get(found.stage).unit.lock(assignment=found)
    assignment = assignment_lock(assignment_id=assignment_id)
    if assignment.status != AssignmentStatus.LEASED:
        raise ConflictError(
            f"This assignment is {assignment.status}; ask for new work instead.", extra={"status": assignment.status}
        )
    assignment.project = found.project
    return assignment_renew(assignment=assignment, now=timezone.now())


def assignment_skip(*, assignment_id: int, user: Any, reason: str) -> Assignment:
    """Decline the work with a reason (``annotation.services.assignments.assignment_skip``), then
    the quality rules that count skips (``pipeline.quality.standing.skip_recorded``)."""
    skipped = services_skip(assignment_id=assignment_id, user=user, reason=reason)
    skip_recorded(stage=stage_get(skipped.stage), assignment=skipped, now=timezone.now())
    return skipped


def assignment_release(*, assignment_id: int, user: Any, untouched_leave: bool = False) -> Assignment:
    """Give the work back to the queue (``annotation.services.assignments.assignment_release``); a
    gold item given back counts as wrong (``pipeline.quality.standing.gold_left``). Idempotent.

    ``untouched_leave``: the workspace's beacon when an annotator leaves an item the stage opened by
    itself without touching it. Real work goes back to the queue at once; a gold item's lease is kept
    instead (the annotator's next ``next`` gives it back, as any held lease), so that walking away from
    an item is neither a way out of a control item nor a wrong answer for a careful annotator.
    """
    with transaction.atomic():
        found = assignment_get_for_annotator(assignment_id=assignment_id, user=user)
        before = found.status
        if untouched_leave and found.purpose != Purpose.WORK and before == AssignmentStatus.LEASED:
            return found
        released = services_release(assignment_id=assignment_id, user=user)
        if before == AssignmentStatus.LEASED and released.purpose != Purpose.WORK:
            gold_left(
                stage=stage_get(released.stage),
                assignment=released,
                outcome=ControlOutcome.RELEASED,
                now=timezone.now(),
            )
    return released


def assignment_expire_leases(*, project: Project | None = None, now: datetime | None = None) -> int:
    """Mark every lease whose time ran out as expired (``annotation.services.assignments``); a gold
    item left to expire counts as wrong (``gold_left``). Returns how many leases expired."""
    now = now or timezone.now()
    with transaction.atomic():
        count = services_expire_leases(project=project, now=now)
        left = Assignment.objects.filter(
            status=AssignmentStatus.EXPIRED, purpose__in=[Purpose.CONTROL, Purpose.QUALIFICATION], updated_at=now
        ).filter(control_result__isnull=True)
        if project is not None:
            left = left.filter(project=project)
        for assignment in left.select_related("project").order_by("pk"):
            gold_left(stage=stage_get(assignment.stage), assignment=assignment, outcome=ControlOutcome.EXPIRED, now=now)
    return count


def assignment_payload(*, assignment: Assignment, candidates: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The ``next`` wire format, rendered by the stage's payload serializer: ``{"id", "stage",
    "status", "lease_expires_at", "screen", "draft"}`` and the stage's own fields.

    ``candidates``: as read with the lease (``Work.candidates``); otherwise read here."""
    stage = stage_get(assignment.stage)
    payload: dict[str, Any] = {
        "id": assignment.pk,
        "stage": str(assignment.stage),
        "status": str(assignment.status),
        "lease_expires_at": assignment.lease_expires_at,
        "screen": screen_payload(screen=assignment.screen, candidates=candidates),
        "draft": assignment.draft or {},
        **stage.payload_extra(assignment=assignment),
    }
    return render(stage.payload_serializer, payload)


def work_payload(*, work: Work) -> dict[str, Any]:
    """``assignment_payload`` of what ``next`` handed out."""
    return assignment_payload(assignment=work.assignment, candidates=work.candidates)


def assignment_result(*, assignment: Assignment) -> dict[str, Any]:
    """The answer to submit / skip / release / draft / extend (same content → same answer)."""
    return render(AssignmentResultSerializer, assignment)


def stages_for_user(*, project: Project, user: Any) -> list[dict[str, Any]]:
    """The stages the caller may work on, in pipeline order, for the home page:
    ``[{"stage", "label", "available", "done_today", "open_assignment", "standing"}]``.

    ``available`` counts units the caller could lease now (their own open one excluded), less
    the control items they hold or did in the stage (``quality_mine.control_leases``): a real lease
    takes its unit out of their queue, so a control lease must take one off the figure as well, or
    reading it before and after ``next`` would tell the two apart (leads and site admins get no
    control items: their figure is exact). ``standing`` is their
    ``pipeline.quality.mine.StandingView`` in the stage (the review stage is listed for reviewers
    and leads only, by its ``check_access``).
    """
    membership = member_get(project=project, user=user)
    now = timezone.now()
    standings = quality_mine.standing_views(project=project, user=user, membership=membership)
    controls = quality_mine.control_leases(project=project, user=user)
    done = assignment_done_today_counts(project=project, user=user, now=now)
    open_ids = dict(
        Assignment.objects.filter(project=project, annotator=user, status=AssignmentStatus.LEASED)
        .order_by("-created_at")
        .values_list("stage", "pk")
    )
    rows = []
    for stage in stages().values():
        try:
            stage.check_access(user=user, membership=membership)
        except PermissionDeniedError:
            continue
        rows.append(
            {
                "stage": stage.name,
                "label": stage.label,
                "available": max(
                    0, stage.available_count(project=project, user=user, now=now) - controls.get(stage.name, 0)
                ),
                "done_today": done.get(stage.name, 0),
                "open_assignment": open_ids.get(stage.name),
                "standing": standings[stage.name],
            }
        )
    return rows


def assignment_double_leases(*, project: Project) -> int:
    """Units that were held by more live leases at one moment than their stage allows
    (``StageDefinition.capacity``). An assignment holds its unit from ``created_at`` until it
    ended: its lease expiry while leased or expired, else when it was submitted, skipped or
    released (``updated_at``). Used by the benchmark and the concurrency tests: it must be 0.
    """
    rows = Assignment.objects.filter(project=project, purpose=Purpose.WORK).values_list(
        "stage",
        "screen_id",
        "question_id",
        "reviewed_id",
        "question__answers_needed",
        "status",
        "created_at",
        "lease_expires_at",
        "updated_at",
    )
    intervals: dict[tuple[str, int], list[tuple[datetime, datetime]]] = {}
    capacity: dict[tuple[str, int], int] = {}
    for name, screen_id, question_id, reviewed_id, needed, status, created, expires, updated in rows:
        stage = stage_get(name)
        key = (name, {"screen": screen_id, "question": question_id, "reviewed": reviewed_id}[stage.unit.field])
        capacity[key] = stage.capacity(project=project, unit_answers_needed=needed)
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

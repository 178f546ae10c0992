"""The pipeline engine: every stage as a concurrency-safe assignment queue.

These are the services the REST API (``pipeline.apis.engine``), the browser workspace
and the simulated crowd call. Names and signatures are a contract (see docs/engine.md).

Concurrency, in short:

* leasing takes the caller's user row lock (one request of one annotator at a time),
  then the first free unit with ``SELECT ... FOR UPDATE SKIP LOCKED`` (oldest first),
  re-checks the unit with fresh statements under that lock and writes the lease;
* a submit locks the unit (screen, or question for ``answers``), then the assignment,
  and applies the stage transition in the same transaction;
* partial unique and check constraints on ``Assignment`` / ``Question`` / ``Answer``
  hold the invariants even if a code path forgot a check.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone

from annotation.db import compiled
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.lock_objects import (
    assignment_lock,
    question_claim_first,
    question_lock,
    queue_claim_first_values,
    screen_claim_first,
    screen_lock,
    user_lock,
)
from annotation.models import App, Assignment, AssignmentStatus, Membership, Project, Question, Screen
from annotation.selectors.assignments import (
    assignment_done_today_counts,
    assignment_get_for_user,
    assignment_open_brief,
)
from annotation.selectors.screens import candidates_json, screen_payload
from annotation.services.assignments import (
    assignment_keep_as_draft,
    assignment_lease_create,
    assignment_mark_submitted,
    assignment_renew,
    assignment_stale_expire,
)

from .base import StageRules, stale_q
from .registry import STAGES, stage_rules

# Under heavy contention a locked unit can turn out taken (its lease committed after our
# snapshot); we then try the next one, a bounded number of times.
LEASE_ATTEMPTS = 16

# The caller's membership and its project, read with one statement on the hot path.
_MEMBERSHIP_COLUMNS = compiled.plain_columns(Membership)
_PROJECT_COLUMNS = compiled.plain_columns(Project, "project__")


def member_check(*, project: Project, user: Any) -> Membership | None:
    """The caller's membership; non-members get ``NotFoundError`` (site admins need none)."""
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None and not user.is_superuser:
        raise NotFoundError("Project not found.")
    return membership


def _member_open_build(stage: str) -> Callable[[dict[str, Any]], QuerySet[Any]]:
    def build(values: dict[str, Any]) -> QuerySet[Any]:
        mine = Assignment.objects.filter(
            project_id=OuterRef("project_id"),
            annotator_id=OuterRef("user_id"),
            stage=stage,
            status=AssignmentStatus.LEASED,
        ).order_by("created_at", "pk")
        return (
            Membership.objects.filter(project__slug=values["slug"], user_id=values["user_id"])
            .annotate(
                _open_id=Subquery(mine.values("pk")[:1]),
                _open_expires=Subquery(mine.values("lease_expires_at")[:1]),
            )
            .values_list(*_MEMBERSHIP_COLUMNS, *_PROJECT_COLUMNS, "_open_id", "_open_expires")
        )

    return build


def member_project_get(
    *, slug: str, user: Any, stage: str
) -> tuple[Project, Membership | None, tuple[int, datetime] | None]:
    """The project ``slug``, the caller's membership and the brief ``(id, lease_expires_at)``
    of their open assignment for ``stage`` (``None``: none), in one query for members.

    Non-members get ``NotFoundError`` (site admins need no membership: two more queries).
    """
    if not getattr(user, "is_authenticated", False):
        raise NotFoundError("Project not found.")
    row = compiled.fetch_one(
        key=("member-open", stage), build=_member_open_build(stage), values={"slug": slug, "user_id": user.pk}
    )
    if row is not None:
        split = len(_MEMBERSHIP_COLUMNS)
        membership = cast(Membership, compiled.instance_from_row(Membership, _MEMBERSHIP_COLUMNS, row[:split]))
        project = cast(Project, compiled.instance_from_row(Project, _PROJECT_COLUMNS, row[split:-2]))
        membership.project = project
        return project, membership, (row[-2], row[-1]) if row[-2] is not None else None
    found = Project.objects.filter(slug=slug).first() if user.is_superuser else None
    if found is None:
        raise NotFoundError("Project not found.")
    return found, None, assignment_open_brief(project=found, user=user, stage=stage)


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _lock_unit(*, rules: StageRules, assignment: Assignment) -> Any:
    if rules.unit == "question":
        assert assignment.question_id is not None
        return question_lock(question_id=assignment.question_id)
    screen = screen_lock(screen_id=assignment.screen_id, with_vh=False)  # no stage reads the VH
    screen.project = assignment.project
    return screen


def _resume_own(*, rules: StageRules, current: Assignment, now: datetime) -> Assignment | None:
    """Renew the caller's lease whose time ran out, if nobody reclaimed it meanwhile."""
    _lock_unit(rules=rules, assignment=current)
    locked = assignment_lock(assignment_id=current.pk)
    if locked.status != AssignmentStatus.LEASED:
        return None
    current.status = locked.status
    return assignment_renew(assignment=current, now=now)


# What a claimed unit is loaded with, in the order of ``from_db``: the unit, its screen, the app.
_UNIT_LOADS: dict[str, list[tuple[Any, list[str]]]] = {
    "screen": [(Screen, compiled.plain_columns(Screen)), (App, compiled.plain_columns(App, "app__"))],
    "question": [
        (Question, compiled.plain_columns(Question)),
        (Screen, compiled.plain_columns(Screen, "screen__")),
        (App, compiled.plain_columns(App, "screen__app__")),
    ],
}


def _unless_caller_holds_one(queue: QuerySet[Any], *, rules: StageRules, project: Project, user: Any) -> QuerySet[Any]:
    """The queue, empty if the caller holds an open assignment of the stage (checked in the
    claim's own statement, so after the user lock: see ``_next``). Evaluated once per
    statement (it does not depend on the unit)."""
    mine = Assignment.objects.filter(project=project, annotator=user, stage=rules.stage, status=AssignmentStatus.LEASED)
    return queue.filter(~Exists(mine))


def _claim(*, rules: StageRules, project: Project, user: Any, now: datetime, tried: list[int]) -> Any:
    """Lock the next unit of the queue (skip-locked) and load it for the payload, or ``None``.

    The unit carries ``_stale``: whether it has leases whose time ran out (to be marked
    expired before ours is written). It is read with the claim: a lease created or renewed
    after this statement's snapshot expires after ``now``, so this cannot miss one, and the
    common case (none) costs no UPDATE.
    """
    is_question = rules.unit == "question"
    shape = rules.queue_shape(project=project)
    if shape is not None and not tried:
        # The hot path: the claim's SQL is compiled once per stage and shape (lock_objects),
        # and the row comes back with what the payload needs (no VH, no JSON columns).
        loads = _UNIT_LOADS[rules.unit]
        columns = [path for _, paths in loads for path in paths]
        with_candidates = connection.vendor == "postgresql"

        def build(values: dict[str, Any]) -> QuerySet[Any]:
            queue = rules.queue(project=values["project"], user=values["user"], now=values["now"])
            queue = _unless_caller_holds_one(queue, rules=rules, project=values["project"], user=values["user"])
            queue = queue.annotate(_stale=rules.unit_has(stale_q(values["now"])))
            if with_candidates:  # the payload's candidates come along (PostgreSQL)
                queue = queue.annotate(_candidates=candidates_json("pk" if rules.unit == "screen" else "screen_id"))
                return queue.values_list("_stale", "_candidates", *columns)
            return queue.values_list("_stale", *columns)

        row = queue_claim_first_values(
            key=(rules.stage, shape, with_candidates),
            build=build,
            values={"project": project, "user": user, "now": now},
        )
        if row is None:
            return None
        objects: list[Any] = []
        at = 2 if with_candidates else 1
        for model, paths in loads:
            objects.append(compiled.instance_from_row(model, paths, row[at : at + len(paths)]))
            at += len(paths)
        for parent, child in itertools.pairwise(objects):  # unit -> screen -> app
            setattr(parent, "screen" if isinstance(child, Screen) else "app", child)
        unit = objects[0]
        unit._stale = row[0]
        if with_candidates:
            (objects[1] if rules.unit == "question" else unit)._candidates = row[1] or []
        return unit
    queue = rules.queue(project=project, user=user, now=now)
    queue = _unless_caller_holds_one(queue, rules=rules, project=project, user=user)
    if tried:
        queue = queue.exclude(pk__in=tried)
    queue = queue.annotate(_stale=rules.unit_has(stale_q(now)))
    if is_question:
        # The screen and app come along for the payload; only the question row is locked.
        queue = queue.select_related("screen", "screen__app").defer("screen__vh")
        return question_claim_first(queryset=queue)
    # The VH can be large and leasing needs none of it.
    return screen_claim_first(queryset=queue.select_related("app").defer("vh"))


def _still_open(*, rules: StageRules, project: Project, user: Any, now: datetime, unit: Any) -> bool:
    """Fresh re-check of a claimed (locked) unit: is it still in the caller's queue?

    A statement of its own (READ COMMITTED: it sees a lease committed after the claim's
    snapshot). Where the queue's SQL is cached, this is the queue restricted to the unit,
    compiled once; otherwise the stage's ``open_to``.
    """
    shape = rules.queue_shape(project=project)
    if shape is None:
        return rules.open_to(unit=unit, user=user, now=now)

    def build(values: dict[str, Any]) -> QuerySet[Any]:
        queue = rules.queue(project=values["project"], user=values["user"], now=values["now"])
        return queue.filter(pk=values["unit_id"])

    return compiled.exists(
        key=("still-open", rules.stage, shape),
        build=build,
        values={"project": project, "user": user, "now": now, "unit_id": unit.pk},
    )


def _lease_new(*, rules: StageRules, project: Project, user: Any, now: datetime) -> Assignment | None:
    tried: list[int] = []
    for _ in range(LEASE_ATTEMPTS):
        unit = _claim(rules=rules, project=project, user=user, now=now, tried=tried)
        if unit is None:
            return None
        screen = unit.screen if rules.unit == "question" else unit
        screen.project = project
        if _still_open(rules=rules, project=project, user=user, now=now, unit=unit):
            is_question = rules.unit == "question"
            assignment = assignment_lease_create(
                project=project,
                user=user,
                stage=rules.stage,
                screen_id=screen.pk,
                question=unit if is_question else None,
                now=now,
                expire_stale=unit._stale,
            )
            assignment.screen = screen  # already loaded: the payload needs no further query
            return assignment
        tried.append(unit.pk)
    return None


def assignment_next(*, project: Project, user: Any, stage: str) -> Assignment | None:
    """The caller's open assignment for ``stage``, or a new lease; ``None`` = nothing for them.

    Non-members: ``NotFoundError``; ``answers`` outside the answer pool:
    ``PermissionDeniedError``; unknown stage: ``NotFoundError``. Idempotent while a lease
    is open (asking twice returns the same assignment). A lease whose time ran out but
    that nobody reclaimed is renewed and returned. Locks: user, then (skip-locked) unit.
    """
    rules = stage_rules(stage)
    membership = member_check(project=project, user=user)
    return _next(rules=rules, project=project, membership=membership, user=user)


def assignment_next_by_slug(*, slug: str, user: Any, stage: str) -> Assignment | None:
    """``assignment_next`` for the project ``slug`` (the REST hot path): the project, the
    caller's membership and open assignment are read in one query. Same contract, errors
    and locks."""
    rules = stage_rules(stage)
    project, membership, brief = member_project_get(slug=slug, user=user, stage=rules.stage)
    return _next(rules=rules, project=project, membership=membership, user=user, brief=brief)


def _next(
    *,
    rules: StageRules,
    project: Project,
    membership: Membership | None,
    user: Any,
    brief: tuple[int, datetime] | bool | None = True,
) -> Assignment | None:
    """``brief``: the caller's open assignment as read just before (``True``: not read yet)."""
    rules.check_access(user=user, membership=membership)
    now = timezone.now()
    if brief is True:
        brief = assignment_open_brief(project=project, user=user, stage=rules.stage)
    if isinstance(brief, tuple) and brief[1] > now:
        # The hot path of a reload: no lock, no write.
        return _own_open(assignment_id=brief[0], user=user, project=project)
    try:
        with transaction.atomic():
            user_lock(user_id=user.pk, commit_without_flush=True)
            if brief is None:
                # The common case: the caller had nothing open. The claim runs after the user
                # lock, in a statement of its own, so it sees a lease that another request of
                # the same caller committed meanwhile, and then claims nothing.
                leased = _lease_new(rules=rules, project=project, user=user, now=now)
                if leased is not None:
                    return leased
            held = assignment_open_brief(project=project, user=user, stage=rules.stage)
            if held is None and brief is None:
                return None  # the queue has nothing for the caller
            if held is not None:
                current = _own_open(assignment_id=held[0], user=user, project=project)
                if held[1] > now:
                    return current  # another request of the same caller just leased it
                renewed = _resume_own(rules=rules, current=current, now=now)
                if renewed is not None:
                    return renewed
            return _lease_new(rules=rules, project=project, user=user, now=now)
    except IntegrityError as exc:  # a constraint caught a race the checks missed: nothing was written
        raise ConflictError("Somebody took this work at the same moment; ask again.") from exc


def _own_open(*, assignment_id: int, user: Any, project: Project) -> Assignment:
    assignment = assignment_get_for_user(assignment_id=assignment_id, user=user)
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
    found = assignment_get_for_user(assignment_id=assignment_id, user=user)
    rules = stage_rules(found.stage)
    if not isinstance(data, dict):
        raise ApplicationError("The submission must be a JSON object.", field="body")
    try:
        with transaction.atomic():
            unit = _lock_unit(rules=rules, assignment=found)
            assignment = assignment_lock(assignment_id=assignment_id)
            assignment.project, assignment.screen = found.project, found.screen
            if rules.unit == "question":
                assignment.question = unit
            cleaned = rules.clean(assignment=assignment, data=data)
            if assignment.status == AssignmentStatus.SUBMITTED:
                if assignment.submission == cleaned:
                    return assignment
                raise ConflictError("This assignment is already submitted, with other content.")
            now = timezone.now()
            if assignment.status != AssignmentStatus.LEASED:
                if not rules.open_to(unit=unit, user=user, now=now, own=assignment):
                    raise ConflictError(
                        "Your lease ended and this work went to someone else (or is complete). "
                        "Your content is kept as this assignment's draft.",
                        extra={"status": assignment.status, "draft_saved": True},
                    )
                assignment_stale_expire(
                    stage=rules.stage,
                    screen_id=None if rules.unit == "question" else unit.pk,
                    question=unit if rules.unit == "question" else None,
                    now=now,
                )
                assignment_renew(assignment=assignment, now=now)
            rules.apply(assignment=assignment, unit=unit, cleaned=cleaned, now=now)
            return assignment_mark_submitted(assignment=assignment, submission=cleaned, now=now)
    except ConflictError:
        assignment_keep_as_draft(assignment_id=assignment_id, data=data)
        raise
    except IntegrityError as exc:
        assignment_keep_as_draft(assignment_id=assignment_id, data=data)
        raise ConflictError(
            "This submission conflicts with another one made at the same moment; it is kept as a draft.",
            extra={"draft_saved": True},
        ) from exc


def assignment_payload(*, assignment: Assignment) -> dict[str, Any]:
    """The ``next`` wire format: ``{"id", "stage", "status", "lease_expires_at", "screen",
    "draft"}`` plus ``previous_questions`` (questions-2, not-answerable), ``question``
    (answers) and ``max_questions`` (question passes)."""
    rules = stage_rules(assignment.stage)
    payload: dict[str, Any] = {
        "id": assignment.pk,
        "stage": str(assignment.stage),
        "status": str(assignment.status),
        "lease_expires_at": _iso(assignment.lease_expires_at),
        # candidates read with the lease's claim, if they were (``_claim``)
        "screen": screen_payload(screen=assignment.screen, candidates=getattr(assignment.screen, "_candidates", None)),
        "draft": assignment.draft or {},
    }
    payload.update(rules.payload_extra(assignment=assignment))
    return payload


def assignment_result(*, assignment: Assignment) -> dict[str, Any]:
    """The answer to submit / skip / release / draft / extend (same content → same answer)."""
    return {
        "id": assignment.pk,
        "stage": str(assignment.stage),
        "status": str(assignment.status),
        "lease_expires_at": _iso(assignment.lease_expires_at),
        "submitted_at": _iso(assignment.submitted_at),
        "submission": assignment.submission,
        "skip_reason": assignment.skip_reason,
        "draft": assignment.draft or {},
    }


def stages_for_user(*, project: Project, user: Any) -> list[dict[str, Any]]:
    """The stages the caller may work on, in pipeline order, for the home page:
    ``[{"stage", "label", "available", "done_today", "open_assignment"}]``.

    ``available`` counts units the caller could lease now (their own open one excluded).
    """
    membership = member_check(project=project, user=user)
    now = timezone.now()
    done = assignment_done_today_counts(project=project, user=user, now=now)
    open_ids = dict(
        Assignment.objects.filter(project=project, annotator=user, status=AssignmentStatus.LEASED)
        .order_by("-created_at")
        .values_list("stage", "pk")
    )
    rows = []
    for rules in STAGES.values():
        try:
            rules.check_access(user=user, membership=membership)
        except PermissionDeniedError:
            continue
        rows.append(
            {
                "stage": rules.stage,
                "label": rules.label,
                "available": rules.available_count(project=project, user=user, now=now),
                "done_today": done.get(rules.stage, 0),
                "open_assignment": open_ids.get(rules.stage),
            }
        )
    return rows

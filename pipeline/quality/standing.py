"""An annotator's standing in a stage, and everything that moves it (docs/quality.md).

* **Qualification.** In a stage with gold items, an annotator new to the stage first gets a set
  of ``qualification_items`` gold items through the normal workspace (one right item short of the
  threshold: ``qualification_extra_items`` more, which decide, ``qualification_sample``). A score at or above
  ``qualification_threshold`` makes them *active*; below, *not qualified*, with each item's
  feedback; a retry after ``qualification_cooldown_hours``, at most ``qualification_attempts``.
  A writing stage (no gold) qualifies its writers by the review of their first
  ``qualification_review_sets`` submissions: they work meanwhile, and every one is reviewed.
* **Monitoring.** Control items (gold) are mixed into an active annotator's leases at
  ``control_rate`` (``control_rate_new`` for their first ``control_new_items``,
  ``control_rate_alert`` while recent control items speak against them: ``control_rate_for``);
  never the same gold item twice. Rules that pause: the sequential test on control items
  (``pipeline.quality.sequential``: the evidence that their accuracy is under
  ``monitoring_threshold`` reaches ``monitoring_evidence``; a control item skipped, given back or
  left to expire counts as wrong), ``fast_response_count`` of the last ``fast_response_window``
  submits faster than ``fast_response_seconds``, ``skips_in_a_row`` skips in a row. A writer
  qualifying by review may have at most ``qualification_review_sets`` submissions waiting for
  review, and the speed rules apply to them as to active annotators.
* **Paused** annotators get no lease in the stage; their open leases are released and, unless
  the project keeps it (``paused_work``), the work they did in the stage is withdrawn from the
  release (and asked of other annotators). A lead reinstates, pauses or sends back to
  qualification. Leads and site admins are never gated.

Every change of standing is a ``QualityEvent``: who (a lead, or none for a rule), when, which
rule, the standing before and after, and the figures the rule saw.

Locks: the standing row (``annotation.lock_objects.standing_lock``), taken after every lock of
the submission it follows, so the lock order stays project -> user -> screen -> question ->
assignment -> answer -> standing.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, DateTimeField, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.db import compiled
from annotation.draws import secret_draw
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError, PermissionDeniedError
from annotation.lock_objects import standing_lock
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlOutcome,
    ControlResult,
    GoldItem,
    Membership,
    PausedWork,
    Project,
    Purpose,
    QualityEvent,
    Review,
    ReviewState,
    ReviewVerdict,
    Standing,
    StandingStatus,
)
from annotation.services.assignments import assignment_leases_end
from pipeline.stages.base import StageDefinition, qualification_mode, trusted
from pipeline.stages.registry import stage_get

from .gold import gold_available, gold_coming_to, gold_open_to, qualification_allowed_wrong
from .rules import LEAD_ACTIONS, Seen, rules_on
from .sequential import sequential_test

# The decisions of a qualification by review (reopened when a review they counted is withdrawn).
REVIEW_DECISIONS = ("review-qualified", "review-not-qualified")


@dataclass(frozen=True)
class StandingBrief:
    """What the leasing hot path reads of a standing (with the membership, in one statement)."""

    status: str
    attempt: int
    items_done: int
    controls_done: int = 0
    evidence: float = 0.0
    owed: bool = False  # ``Standing.qualification_owed``


@dataclass(frozen=True)
class Plan:
    """What the next lease of a stage is: real work, or a gold item (qualification or control)."""

    purpose: str = Purpose.WORK
    attempt: int = 0
    review: bool = False  # a writer qualifying by review: the submission goes to review


WORK = Plan()


# The control draw. Drawn from the operating system's randomness, so that nothing in the code, an
# annotator's id or their counts tells which lease will be a control item (a hash of those could
# be computed by anyone who reads the code). Tests put a seeded ``random.Random`` here
# (``tests/conftest.py``) so that a run is reproducible whatever ids the database gives.
control_random: random.Random = secrets.SystemRandom()


def event(
    *,
    standing: Standing,
    rule: str,
    before: str,
    actor: Any = None,
    figures: dict[str, Any] | None = None,
    note: str = "",
) -> QualityEvent:
    return QualityEvent.objects.create(
        project_id=standing.project_id,
        user_id=standing.user_id,
        stage=standing.stage,
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        rule=rule,
        status_before=before,
        status_after=standing.status,
        figures=figures or {},
        note=note,
    )


def _set(standing: Standing, *, status: str, reason: str, **fields: Any) -> None:
    standing.status = status
    standing.reason = reason
    if fields.get("evidence") == 0.0:
        fields["evidence_clear_at"] = timezone.now()
    for name, value in fields.items():
        setattr(standing, name, value)
    standing.save(update_fields=["status", "reason", "updated_at", *fields])


def _start(*, stage: StageDefinition, project: Project, user: Any, now: datetime) -> Standing:
    """The standing of an annotator's first contact with a stage (qualifying where the stage has
    a way to qualify: gold items, or review)."""
    mode = qualification_mode(stage)
    owed = mode == "gold" and gold_available(project=project, stage=stage.name) == 0
    if owed:
        # no gold to serve yet: nothing to qualify on now. The annotator works, owing the set
        # (``_owed_set``); their work stands only once they pass it (``entered_unqualified``). Waiting
        # instead for gold whose units are still in the queue stalled honest workers in the adversarial
        # benchmark (the units' last answerers may all have met them as control items)
        mode = ""
    status = StandingStatus.QUALIFYING if mode else StandingStatus.ACTIVE
    standing, created = Standing.objects.get_or_create(
        project=project,
        user=user,
        stage=stage.name,
        defaults={
            "status": status,
            "attempt": 1 if mode else 0,
            "attempt_started_at": now if mode else None,
            "qualification_owed": owed,
        },
    )
    if created:
        reason = {"gold": "qualification set", "review": "first submissions are reviewed"}.get(mode, "")
        if owed:
            reason = "no gold item to qualify on yet: your qualification set comes once there is"
        standing.reason = reason
        standing.save(update_fields=["reason"])
        event(standing=standing, rule="started", before="", figures={"mode": mode})
    return standing


def entered_unqualified(*, project: Project, stage: str) -> set[int]:
    """The annotators let into ``stage`` without a qualification set although the stage qualifies on gold
    (``Standing.qualification_owed``): at their first contact no gold item was servable, whether or not
    some was coming (``_start``), or their set found none left to serve before its first item (the
    ``no-gold`` rule), and they have not passed the set they owe yet (``_owed_set``). Their work stands
    only on the control items they pass meanwhile (``pipeline.quality.provisional``). One query."""
    owed = Standing.objects.filter(project=project, stage=stage, qualification_owed=True)
    return set(owed.values_list("user_id", flat=True))


def standing_read(*, project: Project, user: Any, stage: str) -> StandingBrief | None:
    row = (
        Standing.objects.filter(project=project, user=user, stage=stage)
        .values_list("status", "attempt", "items_done", "controls_done", "evidence", "qualification_owed")
        .first()
    )
    return StandingBrief(*row) if row else None


def plan_next(
    *,
    stage: StageDefinition,
    project: Project,
    user: Any,
    membership: Membership | None,
    standing: StandingBrief | None,
    now: datetime,
) -> Plan:
    """What the caller's next lease of ``stage`` is, or ``PermissionDeniedError`` saying why they
    get none (paused, not qualified). Caller holds the user lock (one request of theirs at a time).

    The common case (an active annotator, read with the membership) costs no query."""
    if trusted(user=user, membership=membership):
        return WORK
    if standing is None:
        row = _start(stage=stage, project=project, user=user, now=now)
        standing = StandingBrief(
            row.status, row.attempt, row.items_done, row.controls_done, row.evidence, row.qualification_owed
        )
    if standing.status == StandingStatus.PAUSED:
        raise PermissionDeniedError(_refusal(project=project, user=user, stage=stage))
    if standing.status == StandingStatus.NOT_QUALIFIED:
        standing = _retry_or_refuse(stage=stage, project=project, user=user, now=now)
    mode = qualification_mode(stage)
    if standing.status == StandingStatus.QUALIFYING:
        if mode == "gold":
            return Plan(Purpose.QUALIFICATION, standing.attempt)
        if mode == "review":
            _review_cap_check(stage=stage, project=project, user=user)
            return Plan(review=True)
    if mode == "review" and standing.evidence > 0 and control_random.random() < project.control_rate_alert:
        # An active writer whose reviews speak against them: their work goes to review at the alert
        # rate, as control items come at it in a stage with gold (the same fresh draw, unpredictable).
        return Plan(review=True)
    if stage.has_gold:
        rate = control_rate_for(project=project, standing=standing)
        # A fresh draw per lease (``control_random``): unpredictable, and at the rate on average.
        if rate > 0 and control_random.random() < rate:
            if standing.owed and standing.status == StandingStatus.ACTIVE and mode == "gold":
                standing = _owed_set(stage=stage, project=project, user=user, standing=standing, now=now)
                if standing.status == StandingStatus.QUALIFYING:
                    return Plan(Purpose.QUALIFICATION, standing.attempt)
            return Plan(Purpose.CONTROL)
    return WORK


def _owed_set(
    *, stage: StageDefinition, project: Project, user: Any, standing: StandingBrief, now: datetime
) -> StandingBrief:
    """An annotator let in without a qualification set (``qualification_owed``) is served it at their
    first control draw once a set's worth of gold items is open to them (``qualification_items``): their
    standing goes back to qualifying, with the attempt that found no gold (the first, for one let in at
    their first contact), and the draw's lease is its first item. Passing it makes their work stand as
    anybody's; failing it withdraws their work in the stage (``qualification_check``). One query per
    control draw while the set is owed (none on the other leases), two more when it starts."""
    if gold_open_to(project=project, stage=stage.name, user=user).count() < project.qualification_items:
        return standing
    row = standing_lock(project_id=project.pk, user_id=user.pk, stage=stage.name)
    if row is None or row.status != StandingStatus.ACTIVE or not row.qualification_owed:
        return standing
    before = row.status
    _set(
        row,
        status=StandingStatus.QUALIFYING,
        reason="the qualification set you were let in without, now that gold items are free",
        attempt=max(row.attempt, 1),
        attempt_started_at=now,
    )
    event(standing=row, rule="qualification-owed", before=before, figures={"attempt": row.attempt})
    return StandingBrief(row.status, row.attempt, row.items_done, row.controls_done, row.evidence, True)


def control_rate_for(*, project: Project, standing: StandingBrief) -> float:
    """The share of an annotator's next leases that are control items: ``control_rate_new`` for their
    first ``control_new_items``, else ``control_rate``; at least ``control_rate_alert`` while the
    evidence speaks against them (``evidence > 0``: a recent control item was wrong)."""
    rate = project.control_rate_new if standing.items_done < project.control_new_items else project.control_rate
    return max(rate, project.control_rate_alert) if standing.evidence > 0 else rate


def writer_work(*, project: Any, user_id: Any, stage: str) -> QuerySet[Assignment]:
    """A writer's submitted real work in a stage (what review samples, decides and monitors)."""
    return Assignment.objects.filter(
        project=project, annotator_id=user_id, stage=stage, purpose=Purpose.WORK, status=AssignmentStatus.SUBMITTED
    )


def _review_cap_check(*, stage: StageDefinition, project: Project, user: Any) -> None:
    """A writer qualifying by review gets no more work while ``qualification_review_sets`` of their
    submissions wait for review: what decides their qualification must be decided before they write
    more (a spammer cannot pour out work before anyone has looked at it). One query, for qualifying
    writers only."""
    waiting = writer_work(project=project, user_id=user.pk, stage=stage.name).filter(review_state=ReviewState.SAMPLED)
    if waiting.count() >= project.qualification_review_sets:
        raise PermissionDeniedError(
            f"Your first {project.qualification_review_sets} submissions in {stage.label} are waiting for review; "
            "you can go on once a reviewer has looked at them.",
            extra={"waiting_for": "review"},
        )


def work_refusal(*, stage: StageDefinition, project: Project, user: Any) -> str | None:
    """Why ``user`` may not submit real work of ``stage`` now (paused, not qualified, or qualifying
    on gold), ``None`` when they may. Read when a lease that is no longer open is submitted (a
    pause releases the annotator's leases: work done while paused never enters the release)."""
    membership = Membership.objects.filter(project=project, user=user).first()
    if trusted(user=user, membership=membership):
        return None
    row = Standing.objects.filter(project=project, user=user, stage=stage.name).values_list("status", "reason").first()
    if row is None:
        return None
    status, reason = row
    why = f": {reason}" if reason else ""
    if status == StandingStatus.PAUSED:
        return f"You are paused in {stage.label}{why}; this work is not accepted."
    if status == StandingStatus.NOT_QUALIFIED:
        return f"You did not qualify for {stage.label}{why}; this work is not accepted."
    if status == StandingStatus.QUALIFYING and qualification_mode(stage) == "gold":
        return f"You are qualifying for {stage.label}; finish the qualification first."
    return None


def _refusal(*, project: Project, user: Any, stage: StageDefinition) -> str:
    row = Standing.objects.filter(project=project, user=user, stage=stage.name).first()
    why = f": {row.reason}" if row is not None and row.reason else ""
    return f"You are paused in {stage.label}{why}. A lead can reinstate you."


def retry_after(*, stage: StageDefinition, standing: Standing, project: Project) -> datetime | None:
    """When a not-qualified annotator may start another qualification attempt; ``None``: never
    (no gold set to retry on, or no attempt left). The workspace shows it; ``plan_next`` enforces it."""
    if qualification_mode(stage) != "gold" or standing.attempt >= project.qualification_attempts:
        return None
    started = standing.attempt_started_at or standing.updated_at or timezone.now()
    return started + timedelta(hours=project.qualification_cooldown_hours)


def _retry_or_refuse(*, stage: StageDefinition, project: Project, user: Any, now: datetime) -> StandingBrief:
    row = Standing.objects.get(project=project, user=user, stage=stage.name)
    ready_at = retry_after(stage=stage, standing=row, project=project)
    if ready_at is None:
        raise PermissionDeniedError(
            f"You did not qualify for {stage.label}{': ' + row.reason if row.reason else ''}. Ask a lead."
        )
    if now < ready_at:
        used = f"{row.attempt} of {project.qualification_attempts} attempts used"
        raise PermissionDeniedError(
            f"You did not qualify for {stage.label} yet; you can try again after "
            f"{timezone.localtime(ready_at):%Y-%m-%d %H:%M} ({used})."
        )
    before = row.status
    _set(
        row,
        status=StandingStatus.QUALIFYING,
        reason=f"qualification attempt {row.attempt + 1}",
        attempt=row.attempt + 1,
        attempt_started_at=now,
    )
    event(standing=row, rule="qualification-retry", before=before, figures={"attempt": row.attempt})
    return StandingBrief(row.status, row.attempt, row.items_done, row.controls_done)


# --- what a submission does --------------------------------------------------------------------


def gold_submitted(*, stage: StageDefinition, assignment: Assignment, cleaned: dict[str, Any], now: datetime) -> None:
    """Score a submission on a gold item and apply what follows: the end of a qualification set,
    or the monitoring rules. Caller holds the assignment's lock."""
    assert assignment.gold_id is not None
    gold = GoldItem.objects.get(pk=assignment.gold_id)
    correct, why = stage.gold_score(given=cleaned, gold=gold.answer, project=assignment.project)
    _gold_scored(
        stage=stage,
        assignment=assignment,
        gold=gold,
        correct=correct,
        outcome=ControlOutcome.SUBMITTED,
        feedback={"given": cleaned, "gold": gold.answer, "why": why},
        now=now,
    )


LEFT_WHY: dict[str, str] = {
    ControlOutcome.SKIPPED: "Skipped: a skipped control item counts as wrong.",
    ControlOutcome.RELEASED: "Given back: a control item given back counts as wrong.",
    ControlOutcome.EXPIRED: "Left to expire: a control item left unfinished counts as wrong.",
}


def gold_left(*, stage: StageDefinition, assignment: Assignment, outcome: str, now: datetime) -> None:
    """A gold item's lease ended without a submission: skipped, given back or left to expire by its
    annotator. It scores as wrong (else leaving a suspected control item would escape the test, and
    leaving a hard qualification item would let an annotator pick the easy ones). Idempotent (one
    result per assignment). Leases ended by a lead or a pause are not the annotator's doing and do
    not come here."""
    if assignment.purpose == Purpose.WORK or assignment.gold_id is None:
        return
    if ControlResult.objects.filter(assignment_id=assignment.pk).exists():
        return
    gold = GoldItem.objects.get(pk=assignment.gold_id)
    _gold_scored(
        stage=stage,
        assignment=assignment,
        gold=gold,
        correct=False,
        outcome=outcome,
        feedback={"given": None, "gold": gold.answer, "why": LEFT_WHY.get(outcome, "")},
        now=now,
    )


def _gold_scored(
    *,
    stage: StageDefinition,
    assignment: Assignment,
    gold: GoldItem,
    correct: bool,
    outcome: str,
    feedback: dict[str, Any],
    now: datetime,
) -> None:
    ControlResult.objects.create(
        assignment=assignment,
        gold=gold,
        project_id=assignment.project_id,
        user_id=assignment.annotator_id,
        stage=stage.name,
        purpose=assignment.purpose,
        attempt=assignment.attempt,
        correct=correct,
        outcome=outcome,
        feedback=feedback,
    )
    standing = standing_lock(project_id=assignment.project_id, user_id=assignment.annotator_id, stage=stage.name)
    if standing is None:
        return
    if assignment.purpose == Purpose.QUALIFICATION:
        qualification_check(stage=stage, standing=standing, project=assignment.project, now=now)
    else:
        standing.controls_done += 1
        standing.save(update_fields=["controls_done", "updated_at"])
        _monitor(stage=stage, standing=standing, project=assignment.project, correct=correct, now=now)
        rules_apply(on="control", stage=stage, assignment=assignment, now=now, standing=standing)


def qualification_sample(*, project: Project, results: list[bool]) -> tuple[int, list[bool]]:
    """A qualification attempt as a double sampling plan: how many items it needs and which of its
    ``results`` (in the order served) decide it. The first ``qualification_items`` decide it, unless
    they are exactly one right item short of ``qualification_threshold``: then the attempt goes on with
    ``qualification_extra_items`` more, which decide it alone at the same threshold. A careful worker's
    two slips in ten (3.5% at 3% slips) then fail them only if a slip follows in the next five; a
    constant or random answer, right on about half of a balanced set, is never one short."""
    size = project.qualification_items
    first = results[:size]
    allowed = qualification_allowed_wrong(size, project.qualification_threshold)
    extra = project.qualification_extra_items
    if extra and len(first) == size and first.count(False) == allowed + 1:
        return size + extra, results[size:] or first
    return size, first


def qualification_check(*, stage: StageDefinition, standing: Standing, project: Project, now: datetime) -> bool:
    """Decide a qualification attempt once its set is done (a skipped item counts as wrong;
    ``qualification_sample`` says how many items and which decide); with no gold item left to serve,
    decide on what was done, unless gold items the annotator could get are only waiting for their
    units to leave the queue (``gold_coming_to``): then the attempt waits for them, and this returns
    ``True`` (a set decided on one or two items would pass a constant answer by luck, or fail a careful
    worker for one slip). Caller holds the standing's lock."""
    if standing.status != StandingStatus.QUALIFYING:
        return False
    attempt = Assignment.objects.filter(
        project=project,
        annotator_id=standing.user_id,
        stage=stage.name,
        purpose=Purpose.QUALIFICATION,
        attempt=standing.attempt,
    )
    # Each item done, in the order served: skipped, given back or left to expire is done and wrong
    # (``gold_left``; one without a result yet is wrong too).
    results = [
        bool(correct)
        for correct in attempt.exclude(status=AssignmentStatus.LEASED)
        .order_by("pk")
        .values_list("control_result__correct", flat=True)
    ]
    done = len(results)
    open_now = attempt.filter(status=AssignmentStatus.LEASED).exists()
    needed, deciding = qualification_sample(project=project, results=results)
    if done < needed and open_now:
        return False
    # (checked before the gold left: a pick that waits for a class only coming leaves gold open)
    if done < needed and gold_coming_to(project=project, stage=stage.name, user=standing.user_id).exists():
        return True
    if done < needed and _gold_left(project=project, user_id=standing.user_id, stage=stage.name):
        return False
    before = standing.status
    if done == 0:
        _set(
            standing,
            status=StandingStatus.ACTIVE,
            reason="no gold items were left for a qualification",
            evidence=0.0,
            qualification_owed=True,  # a set of gold items: the stage qualifies on gold
        )
        event(standing=standing, rule="no-gold", before=before)
        return False
    correct, items = sum(deciding), len(deciding)
    score = correct / items
    second = needed > project.qualification_items < len(results)  # the second sample has begun
    figures = {"attempt": standing.attempt, "correct": correct, "items": items, "score": round(score, 4)}
    figures["threshold"] = project.qualification_threshold
    if second:
        figures["first_correct"] = sum(results[: project.qualification_items])
    of = f"{correct} of {items}" + (" more items (a second sample)" if second else "")
    owed = standing.qualification_owed
    if score >= project.qualification_threshold:
        _set(
            standing,
            status=StandingStatus.ACTIVE,
            reason=f"qualified with {of}",
            evidence=0.0,
            qualification_owed=False,
        )
        event(standing=standing, rule="qualification-passed", before=before, figures=figures)
    else:
        left = project.qualification_attempts - standing.attempt
        retry = f"; you can try again in {project.qualification_cooldown_hours} hours" if left > 0 else ""
        _set(standing, status=StandingStatus.NOT_QUALIFIED, reason=f"{of} right{retry}", qualification_owed=False)
        decision = event(standing=standing, rule="qualification-failed", before=before, figures=figures)
        if owed:  # the work they did before the set they owed is out with it (a lead's reinstate brings it back)
            _release_and_withdraw(stage=stage, standing=standing, project=project, now=now, decision=decision)
    return False


def _gold_left(*, project: Project, user_id: int, stage: str) -> bool:
    """Whether a gold item is left that ``gold_pick`` could serve the annotator."""
    return gold_open_to(project=project, stage=stage, user=user_id).exists()


def _monitor(*, stage: StageDefinition, standing: Standing, project: Project, correct: bool, now: datetime) -> None:
    """One more control item in the sequential test (``pipeline.quality.sequential``): the evidence
    moves, then the rules ``on="control"`` are checked. Caller holds the standing's lock."""
    standing.evidence = sequential_test(project).step(standing.evidence, correct)
    if standing.evidence == 0.0:
        standing.evidence_clear_at = now
    standing.save(update_fields=["evidence", "evidence_clear_at", "updated_at"])


def work_submitted(*, stage: StageDefinition, assignment: Assignment, now: datetime) -> str:
    """After real work is submitted: count it, decide whether it goes to review, check the rules
    ``on="submit"`` (the fast-response rule). Returns the assignment's review state. Caller holds the assignment's lock.

    The common case costs one UPDATE (the count)."""
    project = assignment.project
    counted = compiled.add_to(  # every submit: one UPDATE built once
        Standing, "items_done", 1, project_id=assignment.project_id, user_id=assignment.annotator_id, stage=stage.name
    )
    # A writer qualifying by review had the lease marked sampled (``Plan.review``).
    sampled = assignment.review_state == ReviewState.SAMPLED
    if stage.reviewed and not sampled and secret_draw("review", assignment.pk) < project.review_rate:
        assignment.review_state = ReviewState.SAMPLED
    if counted:
        rules_apply(on="submit", stage=stage, assignment=assignment, now=now)
    return assignment.review_state


def skip_recorded(*, stage: StageDefinition, assignment: Assignment, now: datetime) -> None:
    """After a skip: the rules ``on="skip"`` (skips in a row). A skipped qualification item counts as
    wrong (its set may now be complete)."""
    if assignment.purpose != Purpose.WORK:  # a gold item: skipped counts as wrong
        with transaction.atomic():
            gold_left(stage=stage, assignment=assignment, outcome=ControlOutcome.SKIPPED, now=now)
        if assignment.purpose == Purpose.QUALIFICATION:
            return
    with transaction.atomic():
        rules_apply(on="skip", stage=stage, assignment=assignment, now=now)


def review_recorded(*, reviewed: Assignment, now: datetime) -> None:
    """After a review of ``reviewed``: a writer qualifying by review is decided once their first
    ``qualification_review_sets`` submissions are reviewed. Caller holds the reviewed assignment's lock."""
    stage = stage_get(reviewed.stage)
    if qualification_mode(stage) != "review":
        return
    project = reviewed.project
    standing = standing_lock(project_id=project.pk, user_id=reviewed.annotator_id, stage=stage.name)
    if standing is not None and standing.status == StandingStatus.ACTIVE:
        _review_monitor(stage=stage, standing=standing, project=project, now=now)
        rules_apply(on="review", stage=stage, assignment=reviewed, now=now, standing=standing)
        return
    if standing is None or standing.status != StandingStatus.QUALIFYING:
        return
    mine = writer_work(project=project, user_id=reviewed.annotator_id, stage=stage.name).filter(
        submitted_at__gte=standing.attempt_started_at or standing.created_at
    )
    sets = project.qualification_review_sets
    # the attempt's submissions in order (a qualifying writer has few: at most ``sets`` wait for review)
    states = list(mine.order_by("submitted_at", "pk").values_list("review_state", flat=True))
    decided = [state for state in states if state in (ReviewState.ACCEPTED, ReviewState.REJECTED)][:sets]
    # Decided early when it can no longer qualify: the rejections among the first ``sets`` submissions leave
    # too few to reach the bar even if every other one is accepted (each of them stays among the first
    # ``sets`` decided ones, so the decision at the end would be the same). A spam writer is stopped at
    # its first rejection under the default bar (all five accepted), not after five sets or never (the
    # adversarial benchmark's spam writer was still qualifying when the not-answerable stage ran out).
    rejected = states[:sets].count(ReviewState.REJECTED)
    hopeless = (sets - rejected) / sets < project.qualification_threshold
    if len(decided) < sets and not hopeless:
        return
    accepted = decided.count(ReviewState.ACCEPTED)
    score = accepted / len(decided)
    figures: dict[str, Any] = {"accepted": accepted, "reviewed": len(decided), "score": round(score, 4)}
    figures["threshold"] = project.qualification_threshold
    before = standing.status
    if not hopeless and score >= project.qualification_threshold:
        _set(standing, status=StandingStatus.ACTIVE, reason=f"{accepted} of your first {len(decided)} accepted")
        event(standing=standing, rule="review-qualified", before=before, figures=figures)
        return
    if len(decided) < sets:
        figures["decided_early"] = True
        reason = f"{rejected} of your first {sets} submissions rejected: too many to qualify"
    else:
        reason = f"{accepted} of your first {len(decided)} accepted"
    _set(standing, status=StandingStatus.NOT_QUALIFIED, reason=reason)
    decision = event(standing=standing, rule="review-not-qualified", before=before, figures=figures)
    _release_and_withdraw(stage=stage, standing=standing, project=project, now=now, decision=decision)


def reviews_since_active(*, standing: Standing) -> QuerySet[Review]:
    """The reviews that stand of a writer's real submissions in the standing's stage, made since the
    writer last became active (their qualification's reviews, and those before a lead's reinstate, are
    behind them; coming back from a pause whose rejections were withdrawn does not start afresh)."""
    since = _became_active(project_id=standing.project_id, user_id=standing.user_id, stage=standing.stage).first()
    reviews = _writer_reviews(project_id=standing.project_id, user_id=standing.user_id, stage=standing.stage)
    return reviews.filter(created_at__gt=since) if since is not None else reviews


_NEVER = datetime(1970, 1, 1, tzinfo=UTC)  # before any review: a standing that never became active counts all


def _became_active(*, project_id: Any, user_id: Any, stage: Any) -> QuerySet[Any]:
    """When the writer became active, latest first (``created_at`` of the events). The arguments may be
    ``OuterRef``s: ``accepted_since_active`` reads it per standing in one statement."""
    return (
        QualityEvent.objects.filter(
            project_id=project_id, user_id=user_id, stage=stage, status_after=StandingStatus.ACTIVE
        )
        .exclude(status_before=StandingStatus.ACTIVE)
        .exclude(rule="review-pause-withdrawn")  # back on the same record: its reviews still count
        .order_by("-created_at", "-pk")
        .values_list("created_at", flat=True)
    )


def _writer_reviews(*, project_id: Any, user_id: Any, stage: Any) -> QuerySet[Review]:
    return Review.objects.filter(
        reviewed__project_id=project_id,
        reviewed__annotator_id=user_id,
        reviewed__stage=stage,
        reviewed__purpose=Purpose.WORK,
    )


def _active_since() -> Coalesce:
    """Per standing (an expression over its row): when the writer last became active, as
    ``reviews_since_active`` reads it; ``_NEVER`` for a standing that never did by an event."""
    who = {"project_id": OuterRef("project_id"), "user_id": OuterRef("user_id"), "stage": OuterRef("stage")}
    return Coalesce(Subquery(_became_active(**who)[:1]), Value(_NEVER, output_field=DateTimeField()))


@dataclass(frozen=True)
class OwnStandings:
    """What "My work" needs of an annotator's standings, read in one query (``own_standings``)."""

    running: set[tuple[str, int]]  # (stage, attempt) of qualification sets still running
    # Stages that qualify by review where they are active, each with when they became active: their real
    # submissions since then are what ``review-rejections`` monitors (``reviews_since_active``).
    monitored: dict[str, datetime]


def own_standings(*, project: Any, user: Any) -> OwnStandings:
    """``user``'s qualifying standings and the stages where review monitors them. One query."""
    running, monitored = set(), {}
    rows = (
        Standing.objects.filter(
            project=project, user=user, status__in=(StandingStatus.QUALIFYING, StandingStatus.ACTIVE)
        )
        .annotate(since=_active_since())
        .values_list("stage", "status", "attempt", "since")
    )
    for stage, status, attempt, since in rows:
        if status == StandingStatus.QUALIFYING:
            running.add((stage, attempt))
        elif qualification_mode(stage_get(stage)) == "review":
            monitored[stage] = since
    return OwnStandings(running=running, monitored=monitored)


def with_accepted_since_active(standings: QuerySet[Standing]) -> QuerySet[Standing]:
    """``standings`` with ``accepted``: how many of each writer's sets were accepted in reviews that stand
    since they became active, as ``reviews_since_active`` counts them, in the standings' own statement."""
    who = {"project_id": OuterRef("project_id"), "user_id": OuterRef("user_id"), "stage": OuterRef("stage")}
    since = _active_since()
    accepted = (
        _writer_reviews(**who)
        .filter(verdict=ReviewVerdict.ACCEPTED, created_at__gt=OuterRef("active_since"))
        .order_by()
        .values("reviewed__annotator_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return standings.alias(active_since=since).annotate(
        accepted=Coalesce(Subquery(accepted, output_field=IntegerField()), Value(0))
    )


def review_evidence(*, project: Project, standing: Standing) -> float:
    """The sequential test (``pipeline.quality.sequential``) over the verdicts of a writer's sampled
    submissions in a stage that qualifies by review, oldest review first: a rejection is a wrong
    control item, an acceptance a right one (``reviews_since_active``: only reviews that stand). Run
    again from the reviews each time, so that a review withdrawn or brought back moves it exactly as if
    it had never been or had always been there."""
    verdicts = reviews_since_active(standing=standing).order_by("created_at", "pk").values_list("verdict", flat=True)
    return sequential_test(project).run(verdict == ReviewVerdict.ACCEPTED for verdict in verdicts)


def _review_monitor(*, stage: StageDefinition, standing: Standing, project: Project, now: datetime) -> None:
    """An active writer's evidence, from their reviews (``review_evidence``). Caller holds the standing's lock."""
    standing.evidence = review_evidence(project=project, standing=standing)
    if standing.evidence == 0.0:
        standing.evidence_clear_at = now
    standing.save(update_fields=["evidence", "evidence_clear_at", "updated_at"])


def review_pauses_reconsider(*, withdrawn: list[tuple[Assignment, datetime]], now: datetime) -> int:
    """Reviews were withdrawn (their reviewer was stopped): each writer whose evidence they moved has it
    computed again without them, and a writer the ``review-rejections`` rule paused on evidence that no
    longer reaches the bound is active again, with the work the pause withdrew back
    (``review-pause-withdrawn``), or qualifying again when their qualification counted one of the withdrawn
    reviews too. A lead's pause stays. Returns how many writers came back. Locks each writer's standing."""
    back = 0
    writers = sorted({(a.project_id, a.annotator_id, a.stage) for a, _ in withdrawn})
    for project_id, user_id, stage_name in writers:
        stage = stage_get(stage_name)
        if qualification_mode(stage) != "review":
            continue
        standing = standing_lock(project_id=project_id, user_id=user_id, stage=stage_name)
        if standing is None or standing.status not in (StandingStatus.ACTIVE, StandingStatus.PAUSED):
            continue
        project = Project.objects.get(pk=project_id)
        if standing.status == StandingStatus.ACTIVE:
            _review_monitor(stage=stage, standing=standing, project=project, now=now)
            continue
        decision = _last_event(standing)
        if decision is None or decision.actor_id is not None or decision.rule != "review-rejections":
            continue
        evidence = review_evidence(project=project, standing=standing)
        if sequential_test(project).pauses(evidence):
            continue
        before = standing.status
        theirs = [
            (a, at)
            for a, at in withdrawn
            if (a.project_id, a.annotator_id, a.stage) == (project_id, user_id, stage_name)
        ]
        if _qualification_counted(standing=standing, withdrawn=theirs):
            # the same stopped reviewer decided their qualification too: it is decided again
            _set(standing, status=StandingStatus.QUALIFYING, reason="first submissions are reviewed again")
        else:
            _set(standing, status=StandingStatus.ACTIVE, reason="the rejections that paused you were withdrawn")
        standing.evidence = evidence
        standing.save(update_fields=["evidence", "updated_at"])
        figures: dict[str, Any] = {"overturned_event": decision.pk, "evidence": round(evidence, 3)}
        figures.update(_restore(stage=stage, standing=standing, project=project, decision=decision, now=now))
        event(standing=standing, rule="review-pause-withdrawn", before=before, figures=figures)
        back += 1
    return back


def _qualification_counted(*, standing: Standing, withdrawn: list[tuple[Assignment, datetime]]) -> bool:
    """Whether the writer's last qualification by review may have counted one of the ``withdrawn``
    reviews (a submission of the attempt, reviewed before the decision), as ``review_qualifications_reopen``
    reads it."""
    decision = (
        QualityEvent.objects.filter(
            project_id=standing.project_id,
            user_id=standing.user_id,
            stage=standing.stage,
            rule="review-qualified",
            actor__isnull=True,
        )
        .order_by("-created_at", "-pk")
        .first()
    )
    if decision is None:
        return False
    since = standing.attempt_started_at or standing.created_at
    return any(
        a.submitted_at is not None and a.submitted_at >= since and at <= decision.created_at for a, at in withdrawn
    )


def review_qualifications_reopen(*, withdrawn: list[tuple[Assignment, datetime]], now: datetime) -> int:
    """Reviews were withdrawn (``(reviewed submission, when the review was made)``; their reviewer was
    stopped): a writer's qualification by review that may have counted one of them (the submission
    is of the attempt, and the review is older than the decision) is decided again. The writer
    qualifies again (``review-reopened``; the submissions go back to review with it), and what a
    "not qualified" decision withdrew comes back. A lead's decision, and a standing that moved on
    since, stay. Returns how many standings were reopened. Locks each writer's standing."""
    reopened = 0
    for reviewed, reviewed_at in sorted(withdrawn, key=lambda item: (item[0].annotator_id, item[0].stage, item[0].pk)):
        stage = stage_get(reviewed.stage)
        if qualification_mode(stage) != "review":
            continue
        standing = standing_lock(project_id=reviewed.project_id, user_id=reviewed.annotator_id, stage=stage.name)
        if standing is None or standing.status not in (StandingStatus.ACTIVE, StandingStatus.NOT_QUALIFIED):
            continue
        decision = _last_event(standing)
        if decision is None or decision.actor_id is not None or decision.rule not in REVIEW_DECISIONS:
            continue
        since = standing.attempt_started_at or standing.created_at
        if reviewed.submitted_at is None or reviewed.submitted_at < since or reviewed_at > decision.created_at:
            continue
        before = standing.status
        _set(standing, status=StandingStatus.QUALIFYING, reason="first submissions are reviewed again")
        figures: dict[str, Any] = {"overturned": decision.rule, "overturned_event": decision.pk}
        if before == StandingStatus.NOT_QUALIFIED:
            figures.update(
                _restore(stage=stage, standing=standing, project=reviewed.project, decision=decision, now=now)
            )
        event(standing=standing, rule="review-reopened", before=before, figures=figures)
        reopened += 1
    return reopened


def _last_event(standing: Standing) -> QualityEvent | None:
    return (
        QualityEvent.objects.filter(project_id=standing.project_id, user_id=standing.user_id, stage=standing.stage)
        .order_by("-created_at", "-pk")
        .first()
    )


def _restore(
    *, stage: StageDefinition, standing: Standing, project: Project, decision: QualityEvent, now: datetime
) -> dict[str, int]:
    """Bring back what ``decision`` withdrew (the stage's ``restore``): the figures for the event."""
    done = stage.restore(project=project, user=standing.user, event=decision, now=now)
    return {key: value for key, value in done.items() if value}


def rules_apply(
    *,
    on: str,
    stage: StageDefinition,
    assignment: Assignment,
    now: datetime,
    standing: Standing | None = None,
) -> str:
    """Check the rules of ``pipeline.quality.rules.TABLE`` that run ``on`` this moment, in the table's
    order, and pause the annotator by the first that finds against them (their standing locked here
    unless the caller holds it, and in a status the rule pauses). The rule's code, or ``""``."""
    project = assignment.project
    for rule in rules_on(on):
        assert rule.check is not None
        found = rule.check(Seen(stage=stage, project=project, assignment=assignment, now=now, standing=standing))
        if found is None:
            continue
        if standing is None:
            standing = standing_lock(project_id=project.pk, user_id=assignment.annotator_id, stage=stage.name)
        if standing is None or standing.status not in rule.pauses:
            return ""
        pause(
            stage=stage,
            standing=standing,
            project=project,
            rule=rule.code,
            reason=found.why,
            figures=found.figures,
            now=now,
        )
        return rule.code
    return ""


# --- pausing, and the lead's actions -------------------------------------------------------------


def pause(
    *,
    stage: StageDefinition,
    standing: Standing,
    project: Project,
    rule: str,
    reason: str,
    figures: dict[str, Any],
    now: datetime,
    actor: Any = None,
    note: str = "",
) -> None:
    """Pause an annotator in a stage (caller holds the standing's lock): no new leases, their open
    leases released, and (a rule's pause, unless the project keeps it) their work withdrawn."""
    before = standing.status
    _set(standing, status=StandingStatus.PAUSED, reason=reason)
    decision = event(standing=standing, rule=rule, before=before, actor=actor, figures=figures, note=note)
    if actor is None:
        _release_and_withdraw(stage=stage, standing=standing, project=project, now=now, decision=decision)
    else:
        _release(standing=standing, now=now)


def _release(*, standing: Standing, now: datetime) -> int:
    theirs = Assignment.objects.filter(
        project_id=standing.project_id, annotator_id=standing.user_id, stage=standing.stage
    )
    return assignment_leases_end(leases=theirs, now=now)


def _release_and_withdraw(
    *, stage: StageDefinition, standing: Standing, project: Project, now: datetime, decision: QualityEvent
) -> None:
    """Release the annotator's open leases in the stage and, unless the project keeps it, withdraw
    their work there, marked with ``decision`` (the event of the pause or of the failed
    qualification, so that a lead's reinstate brings it back); adds how much to its figures."""
    figures: dict[str, Any] = {"released": _release(standing=standing, now=now)}
    if project.paused_work != PausedWork.KEEP:
        figures["paused_work"] = project.paused_work
        decision.figures = {**decision.figures, **figures}  # the stage's restore reads ``paused_work``
        figures["withdrawn"] = stage.withdraw(
            project=project,
            user=standing.user,
            requeue=project.paused_work == PausedWork.REQUEUE,
            now=now,
            event=decision,
        )
    decision.figures = {**decision.figures, **figures}
    decision.save(update_fields=["figures"])


@transaction.atomic
def standing_act(*, project: Project, user_id: int, stage: str, action: str, actor: Any, note: str = "") -> Standing:
    """A lead's action on an annotator's standing in a stage: ``reinstate`` (active), ``pause``, or
    ``requalify`` (a new qualification: a gold set, or review of the next submissions).

    A reinstate overturns the automatic decision that paused the annotator or found them not
    qualified: what that decision withdrew comes back, except what others redid meanwhile; the
    event's figures say how much (``restored``, ``redone``, ``kept_out``). A requalify gives
    another chance and brings nothing back."""
    if action not in LEAD_ACTIONS:
        raise ApplicationError(f"The action is one of {', '.join(LEAD_ACTIONS)}.", field="action")
    definition = stage_get(stage)
    if not Membership.objects.filter(project=project, user_id=user_id).exists():
        raise NotFoundError("This user is not a member of the project.")
    now = timezone.now()
    Standing.objects.get_or_create(project=project, user_id=user_id, stage=definition.name)
    standing = standing_lock(project_id=project.pk, user_id=user_id, stage=definition.name)
    assert standing is not None
    rule = LEAD_ACTIONS[action]
    before = standing.status
    if action == "pause":
        if standing.status == StandingStatus.PAUSED:
            raise ConflictError("Already paused.")
        pause(
            stage=definition,
            standing=standing,
            project=project,
            rule=rule,
            reason=note or "paused by a lead",
            figures={},
            now=now,
            actor=actor,
            note=note,
        )
        return standing
    figures: dict[str, Any] = {}
    if action == "reinstate":
        # The lead overturns the automatic decision that stopped them: what it withdrew comes back.
        decision = _last_event(standing)
        overturned = (
            decision is not None
            and decision.actor_id is None
            and standing.status in (StandingStatus.PAUSED, StandingStatus.NOT_QUALIFIED)
            and decision.status_after == standing.status
        )
        _set(standing, status=StandingStatus.ACTIVE, reason=note or "reinstated by a lead", evidence=0.0)
        if overturned:
            assert decision is not None
            figures = {"overturned": decision.rule, "overturned_event": decision.pk}
            figures.update(_restore(stage=definition, standing=standing, project=project, decision=decision, now=now))
    else:
        if not qualification_mode(definition):
            raise ApplicationError(f"{definition.label} has no qualification.", field="action")
        _set(
            standing,
            status=StandingStatus.QUALIFYING,
            reason=note or "sent back to qualification by a lead",
            attempt=standing.attempt + 1,
            attempt_started_at=now,
            evidence=0.0,
        )
        _release(standing=standing, now=now)
    event(standing=standing, rule=rule, before=before, actor=actor, figures=figures, note=note)
    return standing

"""Provisional work: what an annotator did after their last passed control item, which no control
item has confirmed yet (docs/quality.md, "Provisional work").

Monitoring stops a spammer after a few control items; a worker who turns bad and then leaves (hit and
run) may meet none, or fail one and be gone before the sequential test decides. Their last items are
then in the data on no evidence. So before post-processing (``held_back_sweep``, called when a lead
starts it), such work is held back from the release and asked of other annotators, as the project's
``provisional_work`` says:

* ``evidence`` (default): the work after the last passed control item of annotators whose evidence is
  against them (``Standing.evidence`` > 0: a recent control item was wrong and nothing cleared it) or
  thin (fewer than ``provisional_min_controls`` control items passed in the stage). When the evidence
  is more than one slip's worth (two or more wrong control items not yet cleared), the work since the
  evidence was last clear (``Standing.evidence_clear_at``: the sequential test's estimate of when the
  run of wrong items began) is held, passed control items inside the run notwithstanding: a worker who
  can answer some control items right (a guessed one, a lucky one) must not vouch for the spam between
  them. One slip of a careful worker keeps the shorter hold;
* ``strict``: that work of every annotator;
* ``off``: nothing is held back.

Thin evidence means nothing is confirmed, whichever policy: an annotator with fewer than
``provisional_min_controls`` control items passed in the stage has all their work held back, not
only what came after their last passed item. Their record is too short to judge, and the few
items they passed may be luck: a hit-and-run judge who turns at random once qualified meets control
items only after turning, and two lucky passes (a two-way judgment is right about one time in four)
used to confirm everything before them.

"After the last passed control item" reads "after the ``provisional_confirmations``-th latest" when the
lead asks for more than one (default 1): a worker who turns bad near the end of their work and passes
the one control item they meet after it (a lucky guess on a two-way judgment) has that item vouch
for everything before it; with 2, work needs two passed control items after it.

Work corroborated by another annotator is never held back: an answer in the majority group of its
question's answers (validation and test; train too when the lead asks for more than one answer there,
``answers_train``), a pre-filtering judgment another judge of the screen made alike. It concerns the
stages with gold (control items): pre-filtering and answers, and only while the project has an active
gold item in the stage (without one no work could ever be confirmed). Leads and site admins are never
gated; paused annotators' work was dealt with by their pause (``paused_work``).

A unit's redone work (a hold took work out of the unit before: the unit was in doubt) stands only when
held-back work on the unit by ``REDO_WITNESSES`` (two) other annotators with nothing against them
agrees with it (or the redo is corroborated as any work is), whatever its author's own record: a judge
who built a clean record while honest, or passed one control item by luck after turning, and then took
the redo units at the end of the stage had their junk redo stand on that record (the adversarial
benchmark's leaks of the listed workers). Evidence against its author holds it as any work is. At the
end of a stage nobody meets a control item any more, so thin evidence alone would hold each redo in
turn for ever (the adversarial benchmark found that loop); but a redo that agrees with the work two
others did before it is three people doing the unit alike: it is kept. One witness was the rule until
the benchmark's cherry-picker (a spammer that answers the control items it recognises right, so that
nothing is ever against it) vouched by its held junk for a sly judge's matching junk redo: control
figures cannot tell such a witness from a careful one, a majority of three can. A thin-evidence
spammer who takes redo units is held again (their work does not match the careful work held before
it, or the careful redos that follow match that instead), and a careful redo of held spam is held
until two more careful annotators agree with it. Held-back work whose author is paused or has evidence
against them vouches for nobody: spammers whose random judgments of a redo unit happen to agree do not
end the loop. Work already held back is never held again (it is out of the data).

An annotator let into a stage that qualifies on gold without a qualification set, who still owes it (no
gold item was servable when they arrived, though some may be on units still in the queue: a stage's
first annotators when all its gold is, as with two answers per train question;
``standing.entered_unqualified``; the set is served once enough gold is open to them, and failing it
withdraws their work) has nothing
confirmed until they have passed a qualification set's worth of control items (``qualification_items``,
or ``provisional_min_controls`` if more), and their work is not corroborated by agreement meanwhile, nor
does their held work witness a redo: nobody has seen them do the task right, and the agreement rule is
lenient (overlapping answers agree). The adversarial benchmark's random answerer got in so at the start
of the answers stage with ``answers_train`` 2 and had 46 answers in the release, in majority groups.

Each annotator whose work is held back gets a ``QualityEvent`` (rule ``provisional-held``, their
standing unchanged) that names the items; the stages' ``withdraw`` takes them out with requeue.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from annotation.lock_objects import standing_lock
from annotation.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Membership,
    PrefilterJudgment,
    Project,
    ProvisionalWork,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    ReviewState,
    ReviewVerdict,
    Role,
    Standing,
    StandingStatus,
)
from pipeline.decisions.agreement import answers_agree
from pipeline.decisions.decide import agreement_settings_for
from pipeline.decisions.selectors import answer_records
from pipeline.stages import stages
from pipeline.stages.base import qualification_mode

from .consensus import majority_of
from .sequential import sequential_test
from .standing import entered_unqualified, event, reviews_since_active, with_accepted_since_active, writer_work

HELD = "provisional-held"  # the rule of the events that hold work back
REVIEW_FIRST = "provisional-review"  # the rule of the events that send a writer's work to review first
# How many other annotators with nothing against them must have done a doubted unit alike (their work held
# back from it) for a redo of it to stand: with one, a spammer whose control record is clean (one who
# answers the control items it recognises right) vouched by its held junk for another's matching junk
# (a random two-flag judgment matches another one time in four); with two, the redo and its witnesses
# are a majority of three.
REDO_WITNESSES = 2


@dataclass
class Held:
    """One annotator's provisional work in one stage that is held back, and why."""

    stage: str
    user_id: int
    assignments: list[int]
    last_passed: datetime | None
    why: str
    corroborated: int = 0
    figures: dict[str, Any] = field(default_factory=dict)


def _trusted(project: Project) -> set[int]:
    """Leads of the project and every site admin (who may work without a membership): never gated."""
    leads = Membership.objects.filter(project=project, role=Role.LEAD).values_list("user_id", flat=True)
    return set(leads) | set(get_user_model().objects.filter(is_superuser=True).values_list("pk", flat=True))


def provisional_held(*, project: Project) -> list[Held]:
    """What ``held_back_sweep`` would hold back now (reads only): per stage with gold and annotator,
    their submitted real work after their last passed control item, not corroborated, when the
    project's ``provisional_work`` says so."""
    policy = project.provisional_work
    if policy == ProvisionalWork.OFF:
        return []
    trusted = _trusted(project)
    # A stage with no active gold item cannot confirm anybody's work: holding it back would hold it
    # for ever (the redone work would be held in turn), so such a stage holds nothing back. The lead
    # sees the stage as "no gold" on the quality page.
    with_gold = set(GoldItem.objects.filter(project=project, active=True).values_list("stage", flat=True).distinct())
    held: list[Held] = []
    test = sequential_test(project)
    one_slip = test.llr(False) if test.on else math.inf  # the evidence one wrong control item adds
    for stage in stages().values():
        # Reviews are not held back: a review's verdict is a decision, not release data, and the
        # review stage does not hold post-processing (a held rejection would let rejected work back in).
        if not stage.has_gold or stage.reviewing or stage.name not in with_gold:
            continue
        standings = {
            row[0]: row[1:]
            for row in Standing.objects.filter(project=project, stage=stage.name).values_list(
                "user_id", "status", "evidence", "evidence_clear_at"
            )
        }
        results = ControlResult.objects.filter(project=project, stage=stage.name)
        last_passed = _confirmed_until(results, confirmations=project.provisional_confirmations)
        passed: dict[int, int] = defaultdict(int)
        for user_id in results.filter(correct=True, purpose=Purpose.CONTROL).values_list("user_id", flat=True):
            passed[user_id] += 1
        # Annotators let in without a qualification set (no gold item was free then): nothing of theirs
        # stands until they have passed a qualification set's worth of control items, and agreement does
        # not vouch for them meanwhile (the module docstring)
        qualify_on = max(project.provisional_min_controls, project.qualification_items)
        unproven = {u for u in entered_unqualified(project=project, stage=stage.name) if passed[u] < qualify_on}
        unit_id = f"{stage.unit.field}_id"
        work = Assignment.objects.filter(
            project=project, stage=stage.name, purpose=Purpose.WORK, status=AssignmentStatus.SUBMITTED
        ).values_list("pk", "annotator_id", "submitted_at", unit_id)
        already, redone = _held_before(project=project, stage=stage.name, unit_id=unit_id)
        rows = [row for row in work if row[0] not in already and row[1] not in trusted]
        # Redone work of a unit held back before, whose author has nothing against them: kept when
        # held-back work on the unit agrees with it, by an author who has nothing against them either
        # (the module docstring).
        doubted = {
            user_id
            for user_id, (status, evidence, _) in standings.items()
            if status == StandingStatus.PAUSED or evidence > 0
        } | unproven
        witnessed = _witnessed(
            project=project,
            stage=stage.name,
            ids=[pk for pk, user_id, _, unit in rows if unit in redone and user_id not in doubted],
            doubted=doubted,
        )
        doubted_units = _withdrawn_by_hold(stage=stage.name, units=redone)
        trailing: dict[int, list[int]] = defaultdict(list)
        redos: set[int] = set()  # held only because they redo a unit held before and nobody did it alike
        for pk, user_id, submitted_at, unit in rows:
            status, evidence, clear_at = standings.get(user_id, (StandingStatus.ACTIVE, 0.0, None))
            if status == StandingStatus.PAUSED or pk in witnessed:
                continue
            if not _confirmed_or_trusted(
                policy=policy,
                passed=passed[user_id],
                min_controls=qualify_on if user_id in unproven else project.provisional_min_controls,
                evidence=evidence,
                one_slip=one_slip,
                since=last_passed.get(user_id) if evidence <= one_slip or clear_at is None else clear_at,
                submitted_at=submitted_at,
            ):
                trailing[user_id].append(pk)
            elif unit in doubted_units:
                # A unit held back once was in doubt: its redo stands when another annotator with nothing
                # against them did it alike (``witnessed``, or corroborated below), not on the redoer's
                # own record, which a worker who turned after building it, or passed one control item by
                # luck after the junk, still has (the adversarial benchmark's sly and hit-and-run judges)
                trailing[user_id].append(pk)
                redos.add(pk)
        corroborated = _corroborated(
            project=project,
            stage=stage.name,
            ids=[i for user_id, ids in trailing.items() if user_id not in unproven for i in ids],
        )
        for user_id, ids in sorted(trailing.items()):
            kept = [i for i in ids if i in corroborated]
            left = [i for i in ids if i not in corroborated]
            _, evidence, clear_at = standings.get(user_id, ("", 0.0, None))
            if not left:
                continue
            if user_id in unproven:
                why = f"let in without a qualification set, fewer than {qualify_on} control items passed since"
            elif all(i in redos for i in left):
                why = "a redo of held-back work that two other annotators have not yet done alike"
            elif passed[user_id] < project.provisional_min_controls and evidence <= one_slip:
                why = f"fewer than {project.provisional_min_controls} control items passed"
            elif policy == ProvisionalWork.STRICT:
                n = project.provisional_confirmations
                why = "no passed control item after it" if n == 1 else f"fewer than {n} passed control items after it"
            elif evidence > one_slip and clear_at is not None:
                why = "control items were wrong since their evidence was last clear"
            else:
                why = "a control item after their last passed one was wrong"
            held.append(
                Held(
                    stage=stage.name,
                    user_id=user_id,
                    assignments=left,
                    last_passed=last_passed.get(user_id),
                    why=why,
                    corroborated=len(kept),
                    figures={
                        "policy": policy,
                        "evidence": round(evidence, 3),
                        "evidence_clear_at": clear_at.isoformat() if clear_at else None,
                        "controls_passed": passed[user_id],
                        "entered_unqualified": user_id in unproven,
                        "held": len(left),
                        "corroborated": len(kept),
                    },
                )
            )
    return held


def _confirmed_or_trusted(
    *,
    policy: str,
    passed: int,
    min_controls: int,
    evidence: float,
    one_slip: float,
    since: datetime | None,
    submitted_at: datetime | None,
) -> bool:
    """Whether one submission stands on its author's own control record (the module docstring): not thin
    (``min_controls`` passed), and either before the time their work is confirmed up to (``since``: the
    last passed control items, or when their evidence was last clear once it is more than one slip's
    worth), or under ``evidence`` with nothing against them."""
    if passed < min_controls:
        return False  # thin evidence: nothing of theirs is confirmed, whichever policy
    if since is not None and submitted_at is not None and submitted_at <= since:
        return True
    return policy == ProvisionalWork.EVIDENCE and evidence <= 0


def _confirmed_until(results: Any, *, confirmations: int) -> dict[int, datetime]:
    """Per annotator, the time up to which their work is confirmed: their ``confirmations``-th latest
    passed control item (the latest with 1). An annotator who passed fewer has nothing confirmed.
    One query."""
    ranked = results.filter(correct=True).annotate(
        rank=Window(RowNumber(), partition_by=[F("user_id")], order_by=F("created_at").desc())
    )
    return dict(ranked.filter(rank=confirmations).values_list("user_id", "created_at"))


def _held_before(*, project: Project, stage: str, unit_id: str) -> tuple[set[int], set[int]]:
    """The assignments of ``stage`` held back before (named by the ``provisional-held`` events), and
    their units (screens, questions). Two queries."""
    assignments: set[int] = set()
    for figures in QualityEvent.objects.filter(project=project, stage=stage, rule=HELD).values_list(
        "figures", flat=True
    ):
        assignments.update(figures.get("assignments", []))
    if not assignments:
        return set(), set()
    return assignments, set(Assignment.objects.filter(pk__in=assignments).values_list(unit_id, flat=True))


def _withdrawn_by_hold(*, stage: str, units: set[int]) -> set[int]:
    """Of ``units`` (screens of pre-filtering, questions of answers), those a provisional hold took work out
    of (an event may name work that was out already, withdrawn by a pause: that unit was not held). One query."""
    if not units:
        return set()
    found: QuerySet[Any, Any]
    if stage == "prefilter":
        found = PrefilterJudgment.objects.filter(screen_id__in=units, withdrawn_by__rule=HELD).values_list("screen_id")
    elif stage == "answers":
        found = Answer.objects.filter(question_id__in=units, withdrawn_by__rule=HELD).values_list("question_id")
    else:
        return set()
    return {unit for (unit,) in found.distinct()}


def _witnessed(*, project: Project, stage: str, ids: list[int], doubted: set[int]) -> set[int]:
    """Of the assignments ``ids`` (redone work), those whose work agrees with work a provisional hold
    took out of the same unit by ``REDO_WITNESSES`` other annotators who are not among ``doubted``
    (paused, or evidence against them: a spammer's held junk vouches for nobody's junk): the same two
    pre-filtering judgments; answers that agree by the project's agreement rule. Two to four queries."""
    if not ids:
        return set()
    if stage == "prefilter":
        return _judged_alike(
            ids, witnesses=Q(withdrawn_by__rule=HELD) & ~Q(annotator_id__in=doubted), at_least=REDO_WITNESSES
        )
    if stage == "answers":
        answered = dict(Answer.objects.filter(assignment_id__in=ids, kept=True).values_list("pk", "assignment_id"))
        if not answered:
            return set()
        question_ids = list(
            Answer.objects.filter(pk__in=list(answered)).values_list("question_id", flat=True).distinct()
        )
        settings = agreement_settings_for(project)
        held = answer_records(question_ids, withdrawn_by_rule=HELD)
        found: set[int] = set()
        for question_id, records in answer_records(question_ids).items():
            for record in records:
                if record.pk not in answered:
                    continue
                alike = {
                    other.annotator_id
                    for other in held.get(question_id, ())
                    if other.annotator_id != record.annotator_id
                    and other.annotator_id not in doubted
                    and answers_agree(record.view, other.view, settings=settings)
                }
                if len(alike) >= REDO_WITNESSES:
                    found.add(answered[record.pk])
        return found
    return set()


def _judged_alike(ids: list[int], *, witnesses: Q, at_least: int = 1) -> set[int]:
    """Of the assignments ``ids``, those whose pre-filtering judgment (one that counts) ``at_least``
    other judges of the screen made alike, among the judgments ``witnesses`` selects. Two queries."""
    judged = list(
        PrefilterJudgment.objects.filter(assignment_id__in=ids, withdrawn_reason="").values_list(
            "assignment_id", "screen_id", "annotator_id", "non_english_app", "vh_out_of_sync"
        )
    )
    others = defaultdict(set)
    for screen_id, annotator_id, ne, oos in PrefilterJudgment.objects.filter(
        witnesses, screen_id__in={row[1] for row in judged}
    ).values_list("screen_id", "annotator_id", "non_english_app", "vh_out_of_sync"):
        others[screen_id].add((annotator_id, ne, oos))
    return {
        pk
        for pk, screen_id, judge, ne, oos in judged
        if len({a for a, n, o in others[screen_id] if a != judge and (n, o) == (ne, oos)}) >= at_least
    }


def _corroborated(*, project: Project, stage: str, ids: list[int]) -> set[int]:
    """Of the assignments ``ids``, those whose work another annotator corroborates (the module
    docstring). Two or three queries."""
    if not ids:
        return set()
    if stage == "prefilter":
        return _judged_alike(ids, witnesses=Q(withdrawn_reason=""))
    if stage == "answers":
        # any question with more than one answer that counts: validation and test by default, train
        # too when the lead asks for more than one answer there (``answers_train``); a held answer is out
        # of the data, so a redone train question has one
        answered = dict(Answer.objects.filter(assignment_id__in=ids).values_list("pk", "assignment_id"))
        if not answered:
            return set()
        question_ids = list(
            Answer.objects.filter(pk__in=list(answered)).values_list("question_id", flat=True).distinct()
        )
        settings = agreement_settings_for(project)
        found: set[int] = set()
        for records in answer_records(question_ids).values():
            if len(records) < 2:
                continue
            group = majority_of([r.view for r in records], settings=settings)
            found.update(answered[r.pk] for i, r in enumerate(records) if i in group and r.pk in answered)
        return found
    return set()


def held_back_sweep(*, project: Project, now: datetime | None = None) -> dict[str, Any]:
    """Hold back the provisional work ``provisional_held`` finds: each annotator's items are withdrawn
    with requeue (``StageDefinition.withdraw(assignments=...)``) under a ``provisional-held`` event.
    Returns ``{"held": {stage: items}, "annotators": n}``; nothing when there is nothing to hold.
    One transaction per annotator and stage (their standing locked first, as a pause does)."""
    from annotation.lock_objects import standing_lock

    from .standing import event

    now = now or timezone.now()
    totals: dict[str, int] = defaultdict(int)
    people = set()
    for item in provisional_held(project=project):
        stage = stages()[item.stage]
        with transaction.atomic():
            Standing.objects.get_or_create(
                project=project, user_id=item.user_id, stage=item.stage, defaults={"status": StandingStatus.ACTIVE}
            )
            standing = standing_lock(project_id=project.pk, user_id=item.user_id, stage=item.stage)
            assert standing is not None
            record: QualityEvent = event(
                standing=standing,
                rule=HELD,
                before=standing.status,
                figures={**item.figures, "assignments": item.assignments, "why": item.why},
            )
            count = stage.withdraw(
                project=project, user=standing.user, requeue=True, now=now, event=record, assignments=item.assignments
            )
            record.figures = {**record.figures, "withdrawn": count}
            record.save(update_fields=["figures"])
        if count:
            totals[item.stage] += count
            people.add(item.user_id)
    return {"held": dict(totals), "annotators": len(people)}


def provisional_review_sweep(*, project: Project, now: datetime | None = None) -> dict[str, Any]:
    """Writers' work that no review has confirmed goes to review before post-processing.

    A writing stage has no gold, so an active writer's work is confirmed only by the reviews of their
    sampled sets (``review-rejections``). A writer who turns after qualifying and writes a few sets of
    nonsense before the stage ends meets no review at the default rate: their nonsense would be in the
    release on no evidence (the adversarial benchmark's sly writer). So, in each stage that qualifies by
    review, some writers' sets that no review has seen, whose questions are still in the data, are marked
    for review under a ``provisional-review`` event, as ``provisional_work`` says:

    * ``evidence`` (default): those of a writer still qualifying, or of an active writer whose record is
      thin (fewer than ``provisional_min_controls`` sets accepted since they became active) or against
      them (``Standing.evidence`` > 0; then only the sets after their last accepted one);
    * ``strict``: every writer's sets after their last accepted one (all of them on a thin record);
    * ``off``: none.

    Returns ``{"waiting": {stage: sets}, "writers": n, "marked": m}``: such writers' sets waiting for
    review now (marked now or before); post-processing waits for them. Their verdicts then do what any
    review does: a rejection takes the set out and moves the writer's evidence, so a writer who wrote
    nonsense is paused and loses all their unaccepted work."""
    out: dict[str, Any] = {"waiting": {}, "writers": 0, "marked": 0}
    policy = project.provisional_work
    if policy == ProvisionalWork.OFF:
        return out
    now = now or timezone.now()
    trusted = _trusted(project)
    in_data = Exists(Question.objects.filter(origin=OuterRef("pk")).exclude(state=QuestionState.DROPPED))
    waiting: dict[str, int] = defaultdict(int)
    writers: set[int] = set()
    for stage in stages().values():
        if qualification_mode(stage) != "review":
            continue
        working = [StandingStatus.ACTIVE, StandingStatus.QUALIFYING]
        active = Standing.objects.filter(project=project, stage=stage.name, status__in=working)
        if policy == ProvisionalWork.EVIDENCE:
            # only the writers this policy looks at, chosen in one statement (at ScreenQA size most
            # writers have enough accepted sets and nothing against them); each is checked again below,
            # under their standing's lock
            minimum = project.provisional_min_controls
            looked_at = Q(evidence__gt=0)
            if minimum > 0:
                looked_at |= Q(status=StandingStatus.QUALIFYING) | Q(accepted__lt=minimum)
            active = with_accepted_since_active(active).filter(looked_at)
        for user_id in active.exclude(user_id__in=trusted).order_by("user_id").values_list("user_id", flat=True):
            with transaction.atomic():
                standing = standing_lock(project_id=project.pk, user_id=user_id, stage=stage.name)
                if standing is None or standing.status not in working:
                    continue
                accepted = list(
                    reviews_since_active(standing=standing)
                    .filter(verdict=ReviewVerdict.ACCEPTED)
                    .values_list("reviewed__submitted_at", flat=True)
                )
                # a writer still qualifying has no record yet (their sets wait for review already); a
                # ``provisional_min_controls`` of 0 turns thin records off, as in the stages with gold
                qualifying = standing.status == StandingStatus.QUALIFYING
                thin = project.provisional_min_controls > 0 and (
                    qualifying or len(accepted) < project.provisional_min_controls
                )
                if qualifying and not thin:
                    continue
                if policy == ProvisionalWork.EVIDENCE and not thin and standing.evidence <= 0:
                    continue
                theirs = writer_work(project=project, user_id=user_id, stage=stage.name).filter(in_data)
                unseen = theirs.filter(review_state=ReviewState.NONE)
                if not thin and accepted:
                    unseen = unseen.filter(submitted_at__gt=max(t for t in accepted if t is not None))
                ids = sorted(unseen.values_list("pk", flat=True))
                if ids:
                    Assignment.objects.filter(pk__in=ids, review_state=ReviewState.NONE).update(
                        review_state=ReviewState.SAMPLED, updated_at=now
                    )
                    why = (
                        f"fewer than {project.provisional_min_controls} sets accepted in review"
                        if thin
                        else "reviews speak against them"
                        if standing.evidence > 0
                        else "every writer's unreviewed work (strict)"
                    )
                    event(
                        standing=standing,
                        rule=REVIEW_FIRST,
                        before=standing.status,
                        figures={"assignments": ids, "why": why, "accepted": len(accepted)},
                    )
                    out["marked"] += len(ids)
                pending = theirs.filter(review_state=ReviewState.SAMPLED).count()
            if pending:
                waiting[stage.name] += pending
                writers.add(user_id)
    out["waiting"], out["writers"] = dict(waiting), len(writers)
    return out

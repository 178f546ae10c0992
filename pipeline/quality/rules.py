"""Every quality rule, one entry each in one table (``TABLE``; docs/quality.md, "Rules that pause").

An entry says everything about its rule: the code a ``QualityEvent`` records (``code``), how it reads to
people (``label``), and for a rule that pauses: when it is checked (``on``), what it checks (``check``,
a function of what just happened, ``Seen``, that returns a ``Finding`` or nothing), which standings it
pauses (``pauses``), the project settings it reads (``settings``, each declared once in
``annotation.models.projects.SETTINGS``) and the sentence docs/quality.md gives it (``when``). The other
entries name decisions the standing machinery records (qualification, review, a lead's action, a hold).

``pipeline.quality.standing.rules_apply`` runs the entries ``on`` one moment:

* ``control``: a control item was scored (the standing's lock is held, its evidence already moved);
* ``submit``: real work was submitted by an annotator with a standing;
* ``skip``: real work or a control item was skipped;
* ``suggestion``: a control item was answered where the model's suggestion was wrong;
* ``review``: a review decided a sampled submission of an active writer (a stage that qualifies by
  review has no gold: the review verdicts are its control items; the standing's lock is held, its
  evidence already moved).

A new rule that pauses is one entry here (plus a declaration in ``SETTINGS`` for each setting it adds,
and ``makemigrations``); ``tests/pipeline/quality/test_rules.py`` checks the table against the code that
records events, the settings and the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotation.models import (
    Assignment,
    AssignmentStatus,
    AssistUse,
    ControlResult,
    Project,
    Purpose,
    Review,
    ReviewVerdict,
    Standing,
    StandingStatus,
    SuggestionUse,
)
from pipeline.stages.base import StageDefinition

from .sequential import sequential_test


@dataclass(frozen=True)
class Seen:
    """What just happened, as a rule sees it."""

    stage: StageDefinition
    project: Project
    assignment: Assignment
    now: datetime
    standing: Standing | None = None  # held (locked) by the caller, ``on="control"`` only


@dataclass(frozen=True)
class Finding:
    """Why a rule pauses: the sentence the annotator reads, and the figures the lead sees."""

    why: str
    figures: dict[str, Any]


@dataclass(frozen=True)
class Rule:
    code: str
    label: str
    on: str = ""  # control | submit | skip | suggestion; "": a decision recorded, not a check
    check: Callable[[Seen], Finding | None] | None = None
    pauses: tuple[str, ...] = (StandingStatus.ACTIVE,)
    settings: tuple[str, ...] = field(default_factory=tuple)
    when: str = ""  # "pauses when ..." (docs/quality.md)
    lead_action: str = ""  # the lead's action that records it (``standing_act``)


# --- the checks ------------------------------------------------------------------------------------


def control_accuracy(seen: Seen) -> Finding | None:
    """The sequential test's evidence (moved by the control item just scored) reached its bound."""
    assert seen.standing is not None
    test = sequential_test(seen.project)
    if not test.pauses(seen.standing.evidence):
        return None
    recent = list(
        ControlResult.objects.filter(
            project=seen.project, user_id=seen.standing.user_id, stage=seen.stage.name, purpose=Purpose.CONTROL
        )
        .order_by("-pk")
        .values_list("correct", flat=True)[:10]
    )
    figures = {
        "evidence": round(seen.standing.evidence, 3),
        "bound": test.bound,
        "bar": test.bar,
        "good": round(test.good, 4),
        "bad": round(test.bad, 4),
        "recent": [bool(c) for c in recent],
    }
    return Finding(f"{sum(recent)} of your last {len(recent)} control items were right", figures)


def review_rejections(seen: Seen) -> Finding | None:
    """The sequential test over an active writer's reviewed submissions (moved by the review just
    made) reached its bound: their sampled work is rejected too often."""
    assert seen.standing is not None
    test = sequential_test(seen.project)
    if not test.pauses(seen.standing.evidence):
        return None
    recent = list(
        Review.objects.filter(
            reviewed__project=seen.project,
            reviewed__annotator_id=seen.standing.user_id,
            reviewed__stage=seen.stage.name,
            reviewed__purpose=Purpose.WORK,
        )
        .order_by("-created_at", "-pk")
        .values_list("verdict", flat=True)[:10]
    )
    accepted = [verdict == ReviewVerdict.ACCEPTED for verdict in recent]
    figures = {"evidence": round(seen.standing.evidence, 3), "bound": test.bound, "bar": test.bar, "recent": accepted}
    why = f"{len(accepted) - sum(accepted)} of your last {len(accepted)} reviewed submissions were rejected"
    return Finding(why, figures)


def fast_responses(seen: Seen) -> Finding | None:
    """``fast_response_count`` of the last ``fast_response_window`` submits were fast. No query unless the
    submit just made was fast (the hot path)."""
    project, assignment = seen.project, seen.assignment
    limit = project.fast_response_seconds
    if limit <= 0 or (seen.now - assignment.created_at).total_seconds() >= limit:
        return None
    rows = list(
        Assignment.objects.filter(
            project=project,
            annotator_id=assignment.annotator_id,
            stage=seen.stage.name,
            status=AssignmentStatus.SUBMITTED,
        )
        .exclude(pk=assignment.pk)
        .order_by("-submitted_at")
        .values_list("created_at", "submitted_at")[: max(0, project.fast_response_window - 1)]
    )
    durations = [(seen.now - assignment.created_at).total_seconds()] + [
        (b - a).total_seconds() for a, b in rows if b is not None
    ]
    fast = sum(1 for d in durations if d < limit)
    if fast < project.fast_response_count:
        return None
    figures = {"fast": fast, "window": len(durations), "seconds": limit}
    return Finding(f"{fast} of your last {len(durations)} submits took less than {limit:g} s", figures)


def skips_in_a_row(seen: Seen) -> Finding | None:
    """The last ``skips_in_a_row`` items (submitted or skipped) were all skipped."""
    limit = seen.project.skips_in_a_row
    if limit <= 0:
        return None
    last = list(
        Assignment.objects.filter(
            project=seen.project,
            annotator_id=seen.assignment.annotator_id,
            stage=seen.stage.name,
            status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED],
        )
        .order_by("-updated_at", "-pk")
        .values_list("status", flat=True)[:limit]
    )
    if len(last) < limit or any(status != AssignmentStatus.SKIPPED for status in last):
        return None
    return Finding(f"your last {limit} items were skipped", {"skips": limit})


def wrong_accepts(*, project_id: int, user_id: int, stage: str) -> tuple[int, int]:
    """(wrong suggestions met on control items, of which accepted unchanged)."""
    rows = AssistUse.objects.filter(
        project_id=project_id, user_id=user_id, stage=stage, purpose=Purpose.CONTROL, suggestion_wrong=True
    )
    uses = list(rows.values_list("use", flat=True))
    return len(uses), sum(1 for use in uses if use == SuggestionUse.ACCEPTED)


def accepts_wrong_suggestions(seen: Seen) -> Finding | None:
    """More than ``assist_wrong_accept_threshold`` of the wrong suggestions met on control items (once
    ``assist_wrong_accept_min`` were met) accepted unchanged."""
    project = seen.project
    met, accepted = wrong_accepts(project_id=project.pk, user_id=seen.assignment.annotator_id, stage=seen.stage.name)
    if met < project.assist_wrong_accept_min or accepted / met <= project.assist_wrong_accept_threshold:
        return None
    figures = {"wrong_met": met, "wrong_accepted": accepted, "threshold": project.assist_wrong_accept_threshold}
    why = f"you accepted {accepted} of the {met} wrong suggestions on control items without changing them"
    return Finding(why, figures)


# --- the table -------------------------------------------------------------------------------------

TABLE: tuple[Rule, ...] = (
    # Rules that pause.
    Rule(
        "control-accuracy",
        "control items show the accuracy is under the bar (sequential test)",
        on="control",
        check=control_accuracy,
        settings=("monitoring_threshold", "monitoring_evidence"),
        when="the sequential test below finds enough evidence (`monitoring_evidence`) that the accuracy is "
        "under `monitoring_threshold`",
    ),
    Rule(
        "review-rejections",
        "reviews of their sampled work show it is rejected too often (sequential test)",
        on="review",
        check=review_rejections,
        settings=("monitoring_threshold", "monitoring_evidence"),
        when="an active writer's reviewed submissions (review verdicts are the control items of a stage that "
        "qualifies by review) give the same sequential test enough evidence (`monitoring_evidence`) that "
        "their acceptance is under `monitoring_threshold`",
    ),
    Rule(
        "fast-responses",
        "too many submits faster than the minimum time",
        on="submit",
        check=fast_responses,
        # Writers qualifying by review work meanwhile: the speed rule applies to them as to active ones.
        pauses=(StandingStatus.ACTIVE, StandingStatus.QUALIFYING),
        settings=("fast_response_seconds", "fast_response_count", "fast_response_window"),
        when="`fast_response_count` of the last `fast_response_window` submits took less than "
        "`fast_response_seconds` (0: off)",
    ),
    Rule(
        "skips-in-a-row",
        "too many skips in a row",
        on="skip",
        check=skips_in_a_row,
        settings=("skips_in_a_row",),
        when="`skips_in_a_row` skips in a row (0: off)",
    ),
    Rule(
        "accepts-wrong-suggestions",
        "accepted too many wrong model suggestions unchanged on control items",
        on="suggestion",
        check=accepts_wrong_suggestions,
        settings=("assist_wrong_accept_threshold", "assist_wrong_accept_min"),
        when="more than `assist_wrong_accept_threshold` of the wrong model suggestions met on control items "
        "(once `assist_wrong_accept_min` were met) were accepted unchanged (docs/assist.md)",
    ),
    # Decisions the standing machinery records.
    Rule("started", "first work in the stage"),
    Rule("qualification-passed", "passed the qualification"),
    Rule("qualification-failed", "did not pass the qualification"),
    Rule("qualification-retry", "started another qualification attempt"),
    Rule("no-gold", "no gold items left for the qualification"),
    Rule("qualification-owed", "served the qualification set they were let in without"),
    Rule("review-qualified", "first submissions accepted in review"),
    Rule("review-not-qualified", "first submissions rejected in review"),
    Rule("review-reopened", "a review the qualification counted was withdrawn: decided again on new reviews"),
    Rule("review-pause-withdrawn", "rejections that paused them were withdrawn (their reviewer was stopped)"),
    Rule("provisional-held", "work after their last passed control item held back before post-processing"),
    Rule("provisional-review", "their sets no review confirmed sent to review before post-processing"),
    Rule("lead-reinstate", "reinstated by a lead", lead_action="reinstate"),
    Rule("lead-pause", "paused by a lead", lead_action="pause"),
    Rule("lead-requalify", "sent back to qualification by a lead", lead_action="requalify"),
)

# The ``QualityEvent.rule`` codes and how they read.
RULES: dict[str, str] = {rule.code: rule.label for rule in TABLE}
LEAD_ACTIONS: dict[str, str] = {rule.lead_action: rule.code for rule in TABLE if rule.lead_action}
MOMENTS = ("control", "submit", "skip", "suggestion", "review")


def rules_on(moment: str) -> tuple[Rule, ...]:
    """The rules that pause, checked at ``moment`` (one of ``MOMENTS``), in the table's order."""
    return tuple(rule for rule in TABLE if rule.on == moment)

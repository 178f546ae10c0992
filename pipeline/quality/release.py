"""Quality-control figures of a release (the ``quality`` section of ``manifest.json``, docs/quality.md
"What the release manifest says").

Deterministic (no timestamp), like the rest of the manifest:

* ``stages``: per stage, whose work is in the release and on what evidence, and what quality
  control took out:

  - ``in_release``: the stage's items that count in the release (``ITEMS``: pre-filtering
    judgments not withdrawn, kept questions by the stage that wrote them, kept answers of kept
    questions, reviews standing), ``total`` and ``by_standing``: by their author's standing in the
    stage when the release is made. ``lead`` (leads and site admins are never gated) and
    ``no_standing`` (no author, or work from before quality control) are counts; every other
    standing (``active``, ``reinstated``: active because a lead reinstated them, ``unqualified``:
    active but let in without a qualification set, which they still owe (``Standing.qualification_owed``),
    ``qualifying``,
    ``paused`` and ``not_qualified``: work a project keeps with ``paused_work=keep``) splits by the
    evidence behind each item: ``controlled`` (its author passed a control item of the stage
    after it), ``review_accepted`` (else: the item was accepted in review) or ``provisional``
    (neither). Stages with gold add ``passed_controls_after``: the gated items by how many control
    items their author passed after them (0, 1, 2, 3+).
  - ``withdrawn``: items quality control took out, by cause: ``rule-pause`` (a monitoring rule
    paused the author), ``not-qualified-by-review`` (a writer's first submissions were rejected),
    ``review-rejected`` (the item itself was rejected), ``owed-qualification-failed`` (an annotator let
    in without a qualification set failed it once it was served). A lead's pause withdraws nothing.
  - pre-filtering only, ``released_on_withdrawn_evidence``: screens with kept questions whose
    pre-filtering decision rested on judgments withdrawn after the screen had moved on (with
    fewer judgments that count than the project takes), and their kept questions.

* ``app_language``: what non-English apps took out, apart from quality control: the apps by who
  decided (the project's rule or a lead), the screens excluded because of their app, and the
  questions dropped with ``non-english-app``.
* ``control_accuracy``: each annotator's accuracy on their control items, per stage, as a
  distribution (annotators, min, quartiles, max);
* ``reviews``: reviews standing, and rejected, per reviewed stage (withdrawn reviews are in the
  review stage's ``withdrawn``).
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q

from annotation.models import (
    Answer,
    App,
    ControlResult,
    Membership,
    PrefilterJudgment,
    Project,
    Purpose,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    Review,
    ReviewState,
    ReviewVerdict,
    Role,
    Screen,
    ScreenState,
    Stage,
    Standing,
    StandingStatus,
)
from pipeline.decisions.decide import (
    QUALITY_ANSWER_REASONS,
    QUALITY_QUESTION_REASONS,
    REASON_AUTHOR_NOT_QUALIFIED,
    REASON_NON_ENGLISH_APP,
    REASON_REVIEW_REJECTED,
)
from pipeline.stages import stages

from .consensus import prefilter_dawid_skene

# Why quality control took an item out (``withdrawn``), in this order.
CAUSES = ("rule-pause", "not-qualified-by-review", "review-rejected", "owed-qualification-failed")
EVIDENCE = ("controlled", "review_accepted", "provisional")
# An item of the release: its author, when it was submitted, and its review state.
Item = tuple[int | None, datetime | None, str]
# An item quality control withdrew: its reason code and the quality decision that did it.
Withdrawn = tuple[str, int | None]


def _distribution(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"annotators": 0}
    values = sorted(values)
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {
        "annotators": len(values),
        "min": round(values[0], 4),
        "q1": round(q1, 4),
        "median": round(median, 4),
        "q3": round(q3, 4),
        "max": round(values[-1], 4),
    }


# --- each stage's items: in the release, and withdrawn -------------------------------------------


def _judgments(project: Project) -> tuple[Iterable[Item], Iterable[Withdrawn]]:
    judgments = PrefilterJudgment.objects.filter(screen__project=project)
    return (
        judgments.filter(withdrawn_reason="").values_list(
            "annotator_id", "assignment__submitted_at", "assignment__review_state"
        ),
        judgments.exclude(withdrawn_reason="").values_list("withdrawn_reason", "withdrawn_by_id"),
    )


def _questions(project: Project, source: str) -> tuple[Iterable[Item], Iterable[Withdrawn]]:
    questions = Question.objects.filter(screen__project=project, source=source)
    return (
        questions.filter(state=QuestionState.KEPT).values_list(
            "author_id", "origin__submitted_at", "origin__review_state"
        ),
        questions.filter(state=QuestionState.DROPPED, drop_reason__in=QUALITY_QUESTION_REASONS).values_list(
            "drop_reason", "withdrawn_by_id"
        ),
    )


def _answers(project: Project) -> tuple[Iterable[Item], Iterable[Withdrawn]]:
    answers = Answer.objects.filter(question__screen__project=project)
    return (
        answers.filter(question__state=QuestionState.KEPT, kept=True).values_list(
            "annotator_id", "assignment__submitted_at", "assignment__review_state"
        ),
        answers.filter(kept=False, drop_reason__in=QUALITY_ANSWER_REASONS).values_list(
            "drop_reason", "withdrawn_by_id"
        ),
    )


def _reviews(project: Project) -> tuple[Iterable[Item], Iterable[Withdrawn]]:
    standing = Review.objects.filter(reviewed__project=project)
    withdrawn = Review.objects.filter(withdrawn_from__project=project)
    return (
        standing.values_list("reviewer_id", "assignment__submitted_at", "assignment__review_state"),
        withdrawn.values_list("withdrawn_reason", "withdrawn_by_id"),
    )


# Per stage: its items in the release and those quality control withdrew (a completeness test
# holds one entry per stage).
ITEMS: dict[str, tuple[str, Callable[[Project], tuple[Iterable[Item], Iterable[Withdrawn]]]]] = {
    Stage.PREFILTER: ("judgments", _judgments),
    # (a partial, not a closure made at import: a closure would hide its code from the mutation tool)
    Stage.QUESTIONS_1: ("questions", partial(_questions, source=QuestionSource.PASS_1)),
    Stage.QUESTIONS_2: ("questions", partial(_questions, source=QuestionSource.PASS_2)),
    Stage.ANSWERS: ("answers", _answers),
    Stage.NOT_ANSWERABLE: ("questions", partial(_questions, source=QuestionSource.NOT_ANSWERABLE)),
    Stage.REVIEW: ("reviews", _reviews),
}


# --- who the authors are, and what vouches for their work ------------------------------------------


class _Authors:
    """The project's authors' standings per stage (``reinstated`` when a lead's reinstate made them
    active, ``unqualified`` when they are active without a qualification set), who is never gated, and
    the times of each one's passed control items per stage."""

    def __init__(self, project: Project) -> None:
        self.ungated = set(
            Membership.objects.filter(project=project)
            .filter(Q(role=Role.LEAD) | Q(user__is_superuser=True))
            .values_list("user_id", flat=True)
        )
        standings = Standing.objects.filter(project=project).values_list(
            "user_id", "stage", "status", "qualification_owed"
        )
        self.status = {(user_id, stage): status for user_id, stage, status, _ in standings}
        owed = {
            (user_id, stage) for user_id, stage, status, owes in standings if owes and status == StandingStatus.ACTIVE
        }
        last: dict[tuple[int, str], str] = {}
        for user_id, stage, rule in (
            QualityEvent.objects.filter(project=project)
            .order_by("created_at", "pk")
            .values_list("user_id", "stage", "rule")
        ):
            last[(user_id, stage)] = rule
        for key, rule in last.items():
            if rule == "lead-reinstate" and self.status.get(key) == StandingStatus.ACTIVE:
                self.status[key] = "reinstated"
        for key in owed:
            self.status[key] = "unqualified"
        self.passed: dict[tuple[int, str], list[datetime]] = defaultdict(list)
        for user_id, stage, at in (
            ControlResult.objects.filter(project=project, purpose=Purpose.CONTROL, correct=True)
            .order_by("created_at")
            .values_list("user_id", "stage", "created_at")
        ):
            self.passed[(user_id, stage)].append(at)

    def standing(self, user_id: int | None, stage: str) -> str:
        if user_id is None:
            return "no_standing"
        if user_id in self.ungated:
            return "lead"
        return self.status.get((user_id, stage), "no_standing")

    def controls_after(self, user_id: int, stage: str, at: datetime | None) -> int:
        times = self.passed.get((user_id, stage), [])
        return len(times) if at is None else len(times) - bisect.bisect_right(times, at)


def _in_release(stage: str, items: Iterable[Item], authors: _Authors) -> dict[str, Any]:
    counts: dict[str, Any] = {"lead": 0, "no_standing": 0}
    after: Counter[str] = Counter()
    total = 0
    for user_id, at, review_state in items:
        total += 1
        standing = authors.standing(user_id, stage)
        if standing in ("lead", "no_standing"):
            counts[standing] += 1
            continue
        assert user_id is not None
        passed = authors.controls_after(user_id, stage, at)
        after[str(passed) if passed < 3 else "3+"] += 1
        if passed:
            evidence = "controlled"
        elif review_state == ReviewState.ACCEPTED:
            evidence = "review_accepted"
        else:
            evidence = "provisional"
        bucket = counts.setdefault(standing, dict.fromkeys(EVIDENCE, 0))
        bucket[evidence] += 1
    found: dict[str, Any] = {"total": total, "by_standing": dict(sorted(counts.items()))}
    if stages()[stage].has_gold:
        found["passed_controls_after"] = {key: after.get(key, 0) for key in ("0", "1", "2", "3+")}
    return found


def _withdrawn(rows: Iterable[Withdrawn], decisions: Mapping[int, tuple[int | None, str, str]]) -> dict[str, int]:
    """Withdrawn items by cause (``CAUSES``)."""
    out = dict.fromkeys(CAUSES, 0)
    for reason, event_id in rows:
        actor_id, status_after, rule = decisions.get(event_id, (None, "", "")) if event_id else (None, "", "")
        if reason == REASON_REVIEW_REJECTED:
            cause = "review-rejected"
        elif rule == "qualification-failed":
            cause = "owed-qualification-failed"
        elif reason == REASON_AUTHOR_NOT_QUALIFIED or status_after == StandingStatus.NOT_QUALIFIED:
            cause = "not-qualified-by-review"
        elif actor_id is not None:
            cause = "lead-pause"  # (a lead's pause withdraws nothing today)
        else:
            cause = "rule-pause"
        out[cause] = out.get(cause, 0) + 1
    return out


def released_on_withdrawn_evidence(*, project: Project) -> dict[str, int]:
    """Screens with kept questions whose pre-filtering decision rested on withdrawn judgments
    (fewer judgments that count than the project takes), and their kept questions."""
    # The withdrawn judgment is asked for in a subquery: a filter on ``judgments`` before the count would
    # restrict the count's join to the withdrawn judgments, and every screen would count none.
    withdrawn = PrefilterJudgment.objects.filter(screen=OuterRef("pk")).exclude(withdrawn_reason="")
    screens = list(
        Screen.objects.filter(Exists(withdrawn), project=project, state=ScreenState.ANSWERING)
        .annotate(counting=Count("judgments", filter=Q(judgments__withdrawn_reason=""), distinct=True))
        .filter(counting__lt=project.prefilter_judgments)
        .values_list("pk", flat=True)
    )
    kept = Question.objects.filter(screen_id__in=screens, state=QuestionState.KEPT)
    with_kept = set(kept.values_list("screen_id", flat=True))
    return {"screens": len(with_kept), "questions": kept.count()}


def stage_evidence(*, project: Project) -> dict[str, dict[str, Any]]:
    """The ``stages`` part of the section (the module docstring)."""
    authors = _Authors(project)
    decisions = {
        pk: (actor_id, status_after, rule)
        for pk, actor_id, status_after, rule in QualityEvent.objects.filter(project=project).values_list(
            "pk", "actor_id", "status_after", "rule"
        )
    }
    out: dict[str, dict[str, Any]] = {}
    for stage in stages():
        unit, read = ITEMS[stage]
        items, withdrawn = read(project)
        out[stage] = {
            "items": unit,
            "in_release": _in_release(stage, items, authors),
            "withdrawn": _withdrawn(withdrawn, decisions),
        }
    out[Stage.PREFILTER]["released_on_withdrawn_evidence"] = released_on_withdrawn_evidence(project=project)
    return out


def app_language_drops(*, project: Project) -> dict[str, Any]:
    """What non-English apps took out of the release (not quality control)."""
    apps = dict(
        App.objects.filter(project=project, non_english=True)
        .values_list("language_set_by")
        .annotate(n=Count("pk"))
        .values_list("language_set_by", "n")
    )
    return {
        "apps_non_english": {"rule": apps.get("rule", 0), "lead": apps.get("lead", 0)},
        "screens_excluded": Screen.objects.filter(
            project=project, state=ScreenState.EXCLUDED, exclusion_reason="non_english"
        )
        .exclude(excluded_from="")
        .count(),
        "questions_dropped": Question.objects.filter(
            screen__project=project, state=QuestionState.DROPPED, drop_reason=REASON_NON_ENGLISH_APP
        ).count(),
    }


def control_accuracy(*, project: Project) -> dict[str, dict[str, Any]]:
    per: dict[str, list[float]] = defaultdict(list)
    for stage, _, n, correct in (
        ControlResult.objects.filter(project=project, purpose=Purpose.CONTROL)
        .values_list("stage", "user_id")
        .annotate(n=Count("pk"), correct=Count("pk", filter=Q(correct=True)))
        .values_list("stage", "user_id", "n", "correct")
        .order_by("stage", "user_id")
    ):
        per[stage].append(correct / n)
    return {stage: _distribution(values) for stage, values in sorted(per.items())}


def reviews_done(*, project: Project) -> dict[str, dict[str, int]]:
    rows = (
        Review.objects.filter(reviewed__project=project)
        .values_list("reviewed__stage")
        .annotate(n=Count("pk"), rejected=Count("pk", filter=Q(verdict=ReviewVerdict.REJECTED)))
        .values_list("reviewed__stage", "n", "rejected")
        .order_by("reviewed__stage")
    )
    return {stage: {"done": n, "rejected": rejected} for stage, n, rejected in rows}


def release_quality_figures(*, project: Project) -> dict[str, Any]:
    """The quality-control section of a release's manifest (the module docstring)."""
    return {
        "stages": stage_evidence(project=project),
        "app_language": app_language_drops(project=project),
        "control_accuracy": control_accuracy(project=project),
        "reviews": reviews_done(project=project),
        # each pre-filtering judge's accuracy estimated by Dawid-Skene (several judges per screen only)
        "prefilter_judges": prefilter_dawid_skene(project=project),
    }

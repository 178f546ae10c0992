"""Pre-filtering (per screen): *app is non-English* and *VH out of sync in the main content*.

``project.prefilter_judgments`` (N, default 1) annotators judge each screen; when the N-th
judgment arrives the majority decides. **A tie excludes** (N even, half say "exclude"):
a screen that half the judges doubt is not worth questions and answers; precision of
the released data beats recall (documented in docs/engine.md). Non-English wins over
out-of-sync as the reason kept on the screen (it is a property of the app); every
judgment stays in ``PrefilterJudgment``.

Language is a property of the app (as in the papers). An app becomes non-English by the
project's rule (``app_non_english_screens`` of its screens judged non-English, at least
``app_non_english_share`` of its judged screens; checked after each non-English judgment,
``app_language_check``) or by a lead (``app_mark_non_english``, whose word the rule never
overrides; a lead may also declare an app English, which brings back what its language
excluded). Once an app is non-English, all its
screens leave every queue and the release, whatever their state: screens excluded, open
leases ended, questions dropped with ``non-english-app`` (counted in the funnel and the
manifest apart from quality control's withdrawals).

Quality control can withdraw judgments (``judgments_withdraw``: a stopped judge's, or one
rejected in review). A withdrawn judgment stays for the record and counts nowhere: not in its
screen's decision, not in the app-language votes. A screen whose decision rested on withdrawn
judgments (the judgments that remain do not force the same decision whatever the missing ones
would say, ``prefilter_settled``) goes back to pre-filtering if it was excluded or is still
waiting for its pass-1 writer; a screen further along stays where it is (questions are written
on it) and the release manifest reports its evidence as withdrawn. Apps whose non-English
decision the rule made are decided again without the withdrawn votes (``app_language_recheck``),
and one that no longer meets the rule is restored (``_app_restore``); a lead's decision stands.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.http import QueryDict
from django.utils import timezone
from rest_framework import serializers

from annotation.exceptions import ConflictError, NotFoundError
from annotation.lock_objects import project_lock
from annotation.models import (
    App,
    Assignment,
    AssignmentStatus,
    ControlResult,
    PrefilterJudgment,
    Project,
    QualityEvent,
    Question,
    QuestionState,
    Screen,
    ScreenState,
    Stage,
    SuggestionUse,
)
from annotation.services.assignments import assignment_leases_end
from pipeline.assist.contract import JUDGMENTS
from pipeline.assist.service import suggestion_for
from pipeline.decisions.decide import REASON_NON_ENGLISH_APP, REASON_REVIEW_REJECTED, REASON_WITHDRAWN

from .base import StageDefinition, crowd_share, form_flag, form_text, live_q, taken_by_user_q
from .units import SCREEN
from .wire import NOTE_MAX, AssignmentPayloadSerializer, FlagField, StrictSerializer, TextField, stage_name_field

REASON_NON_ENGLISH = "non_english"
REASON_OUT_OF_SYNC = "vh_out_of_sync"
# How the reasons read on the lead's pages.
EXCLUSION_REASONS = {REASON_NON_ENGLISH: "non-English app", REASON_OUT_OF_SYNC: "VH out of sync"}


def _majority(votes: int, judgments: int) -> bool:
    """Half the judges or more (ties exclude), and at least one."""
    return votes * 2 >= judgments and votes > 0


def prefilter_decide(*, votes_non_english: int, votes_out_of_sync: int, judgments: int) -> str:
    """The exclusion reason ("" = the screen goes on). Ties exclude."""
    if _majority(votes_non_english, judgments):
        return REASON_NON_ENGLISH
    if _majority(votes_out_of_sync, judgments):
        return REASON_OUT_OF_SYNC
    return ""


# A judge's reliability before their control items say otherwise: a Beta prior of this strength
# (pseudo-items) and mean (the chance a judgment of theirs is right on both flags).
RELIABILITY_PRIOR_ITEMS = 10
RELIABILITY_PRIOR_MEAN = 0.9


def judge_weights(*, project: Project, user_ids: list[int]) -> dict[int, float]:
    """How much each judge's vote weighs when several judge a screen: the log-odds of their being
    right on one flag (``log p / (1 - p)``), with ``p`` the square root of their estimated accuracy on
    pre-filtering control and qualification items (both flags right), the posterior mean of a Beta
    prior (``RELIABILITY_PRIOR_MEAN`` over ``RELIABILITY_PRIOR_ITEMS``) updated by their results. A
    judge no better than chance weighs 0 (a worse one too: their votes are ignored, not inverted).
    One query. This is the one-coin Dawid-Skene weighting with the reliabilities read from gold
    (``pipeline.quality.consensus`` estimates them by EM for the lead's figures)."""
    rows = (
        ControlResult.objects.filter(project=project, stage=Stage.PREFILTER, user_id__in=user_ids)
        .values("user_id")
        .annotate(n=Count("pk"), right=Count("pk", filter=Q(correct=True)))
    )
    found = {row["user_id"]: (row["right"], row["n"]) for row in rows}
    weights = {}
    for user_id in user_ids:
        right, n = found.get(user_id, (0, 0))
        accuracy = (right + RELIABILITY_PRIOR_MEAN * RELIABILITY_PRIOR_ITEMS) / (n + RELIABILITY_PRIOR_ITEMS)
        per_flag = min(max(math.sqrt(accuracy), 1e-6), 1 - 1e-6)
        weights[user_id] = max(0.0, math.log(per_flag / (1 - per_flag)))
    return weights


def prefilter_decide_weighted(votes: list[tuple[bool, bool, float]]) -> str:
    """The exclusion reason from weighted votes ``(non_english, out_of_sync, weight)``: a flag holds
    when the weight of those who raised it is at least that of those who did not (ties exclude, as
    in ``prefilter_decide``, to which equal weights reduce) and someone with weight raised it."""

    def holds(index: int) -> bool:
        yes = sum(vote[2] for vote in votes if vote[index])
        no = sum(vote[2] for vote in votes if not vote[index])
        return yes > 0 and yes >= no

    if holds(0):
        return REASON_NON_ENGLISH
    if holds(1):
        return REASON_OUT_OF_SYNC
    return ""


def prefilter_settled(
    *, votes_non_english: int, votes_out_of_sync: int, judgments: int, needed: int, language: bool = True
) -> str | None:
    """The decision that ``judgments`` (with their votes) force whatever the missing ones of the
    ``needed`` would say, or ``None`` when the missing judgments could change it. ``language``
    False: the language votes do not count (a lead declared the app English)."""
    missing = max(needed - judgments, 0)
    total = max(judgments, needed)
    outcomes = {
        prefilter_decide(
            votes_non_english=votes_non_english + extra_ne if language else 0,
            votes_out_of_sync=votes_out_of_sync + extra_sync,
            judgments=total,
        )
        for extra_ne in range(missing + 1 if language else 1)
        for extra_sync in range(missing + 1)
    }
    return outcomes.pop() if len(outcomes) == 1 else None


def _counting() -> QuerySet[PrefilterJudgment]:
    """The judgments that count: not withdrawn by quality control."""
    return PrefilterJudgment.objects.filter(withdrawn_reason="")


def _tally(screen_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """Per screen, ``(judgments, non_english, out_of_sync)`` over the judgments that count (one query)."""
    rows = (
        _counting()
        .filter(screen_id__in=screen_ids)
        .values("screen_id")
        .annotate(
            n=Count("pk"),
            ne=Count("pk", filter=Q(non_english_app=True)),
            oos=Count("pk", filter=Q(vh_out_of_sync=True)),
        )
    )
    return {row["screen_id"]: (row["n"], row["ne"], row["oos"]) for row in rows}


def _screen_reason(
    votes: list[tuple[int, bool, bool]], *, needed: int, english: bool, weights: dict[int, float] | None
) -> str:
    """A screen's decision from the judgments that count, ``(judge id, non_english, out_of_sync)``
    each (at least ``needed`` of them): with several judges per screen each vote weighs by its judge's
    reliability (``weights``, from ``judge_weights``), with one a plain majority of ``needed``.
    ``english``: a lead declared the app English, so the language votes do not count. The one rule
    for a submit and for a screen whose judgments a reinstatement completed."""
    if needed >= 2:
        assert weights is not None
        return prefilter_decide_weighted([(ne and not english, oos, weights[judge]) for judge, ne, oos in votes])
    return prefilter_decide(
        votes_non_english=0 if english else sum(ne for _, ne, _ in votes),
        votes_out_of_sync=sum(oos for _, _, oos in votes),
        judgments=needed,
    )


class PrefilterSubmitSerializer(StrictSerializer):
    non_english_app = FlagField(help_text="the app is not in English (a property of the app)")
    vh_out_of_sync = FlagField(help_text="VH out of sync with the pixels in the main content")
    note = TextField(max_length=NOTE_MAX, required=False, allow_blank=True, default="")


class JudgmentFlagsSerializer(serializers.Serializer):
    non_english_app = serializers.BooleanField()
    vh_out_of_sync = serializers.BooleanField()


class JudgmentScoresSerializer(serializers.Serializer):
    non_english_app = serializers.FloatField(help_text="the backend's probability, 0 to 1")
    vh_out_of_sync = serializers.FloatField(help_text="the backend's probability, 0 to 1")


class PrefilterSuggestionSerializer(serializers.Serializer):
    model_version = serializers.CharField(allow_blank=True)
    judgments = JudgmentFlagsSerializer(help_text="the judgments suggested (a probability above 0.5 flags)")
    scores = JudgmentScoresSerializer(help_text="the backend's probabilities")


class PrefilterPayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.PREFILTER)
    suggestion = PrefilterSuggestionSerializer(
        allow_null=True, help_text="the model's suggestion (docs/assist.md); null: none. Never a judgment by itself."
    )


class Prefilter(StageDefinition):
    name = Stage.PREFILTER
    label = "Pre-filtering"
    short_label = "Pre-filter"
    unit = SCREEN
    queue_inputs = ("prefilter_judgments",)  # one judge or several: two different queries
    submit_serializer = PrefilterSubmitSerializer
    payload_serializer = PrefilterPayloadSerializer
    template = "frontend/workspace/prefilter.html"
    controller = "prefilter"
    viewer = {"labels": True, "drag_pans": True, "boxes": True}
    crowd_skips = True
    has_gold = True
    # a judge who never flags is right on the screens with no flag (about two in three): each class
    # of gold alike in a qualification set (StageDefinition.gold_classes)
    gold_classes = tuple(
        {"non_english_app": non_english, "vh_out_of_sync": out_of_sync}
        for non_english in (False, True)
        for out_of_sync in (False, True)
    )
    review_reasons = {
        "language": "The app's language was judged wrong",
        "sync": "The VH sync of the main content was judged wrong",
    }

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        qs = Screen.objects.filter(project=project, state=ScreenState.PREFILTER, app__non_english=False).exclude(
            self.unit.has(self.name, taken_by_user_q(user))
        )
        if project.prefilter_judgments == 1:
            qs = qs.exclude(self.unit.has(self.name, live_q(now)))
        else:
            # Several judges per screen: live leases plus judgments so far must stay under N.
            # (a judgment withdrawn by quality control leaves its place free)
            counted = Q(status=AssignmentStatus.SUBMITTED, judgment__withdrawn_reason="")
            taken = (
                Assignment.objects.filter(live_q(now) | counted, stage=self.name)
                .values("screen_id")
                .annotate(n=Count("pk"))
                .filter(n__gte=project.prefilter_judgments)
                .values("screen_id")
            )
            qs = qs.exclude(pk__in=taken)
        return qs.order_by("queue_key", "pk")

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        screen: Screen = unit
        if screen.state != ScreenState.PREFILTER or App.objects.filter(pk=screen.app_id, non_english=True).exists():
            return False
        others = Assignment.objects.filter(screen=screen, stage=self.name).filter(
            live_q(now) | Q(status=AssignmentStatus.SUBMITTED)
        )
        if own is not None:
            others = others.exclude(pk=own.pk)
        if others.filter(annotator=user).exists():
            return False
        # a judgment withdrawn by quality control leaves its place free
        counted = others.filter(live_q(now) | Q(judgment__withdrawn_reason=""))
        return counted.count() < screen.project.prefilter_judgments

    def capacity(self, *, project: Project, unit_answers_needed: int | None) -> int:
        return project.prefilter_judgments

    def limits(self, *, project: Project) -> dict[str, int]:
        return {"note_max": NOTE_MAX}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        screen: Screen = unit
        if screen.state != ScreenState.PREFILTER:
            raise ConflictError("This screen is no longer waiting for pre-filtering.")
        PrefilterJudgment.objects.create(
            assignment=assignment,
            screen=screen,
            annotator_id=assignment.annotator_id,
            non_english_app=cleaned["non_english_app"],
            vh_out_of_sync=cleaned["vh_out_of_sync"],
            note=cleaned["note"],
        )
        votes = list(_counting().filter(screen=screen).values_list("annotator_id", "non_english_app", "vh_out_of_sync"))
        needed = screen.project.prefilter_judgments
        if len(votes) < needed:
            return
        # a lead's "English" outweighs the judges' language votes (asked only when there are some)
        declared_english = any(ne for _, ne, _ in votes) and (
            App.objects.filter(pk=screen.app_id, non_english=False, language_set_by="lead").exists()
        )
        reason = _screen_reason(
            votes,
            needed=needed,
            english=declared_english,
            weights=judge_weights(project=screen.project, user_ids=[judge for judge, _, _ in votes])
            if needed >= 2
            else None,
        )
        if reason:
            screen.state = ScreenState.EXCLUDED
            screen.exclusion_reason = reason
        else:
            screen.state = ScreenState.QUESTIONS_1
        screen.save(update_fields=["state", "exclusion_reason"])
        # Any other judge still holding this screen (N > 1) is done: their lease ends.
        others = Assignment.objects.filter(screen=screen, stage=self.name).exclude(pk=assignment.pk)
        assignment_leases_end(leases=others, now=now, status=AssignmentStatus.EXPIRED)

    def after_submit(self, *, assignment: Assignment) -> None:
        """A judgment may make the whole app non-English (the project's rule): a judgment of
        non-English, or, with several judges per screen, any judgment that completes a screen another
        judge called non-English (the screen now counts for its app, by its judges' majority: a tie
        says non-English, so a "no" can be the judgment that makes the app's count)."""
        project = assignment.project
        said = bool((assignment.submission or {}).get("non_english_app"))
        if not said and project.prefilter_judgments >= 2:
            tally = _tally([assignment.screen_id]).get(assignment.screen_id, (0, 0, 0))
            said = tally[1] > 0 and tally[0] >= project.prefilter_judgments
        if said and assignment.screen.app_id is not None:
            app_language_check(project=project, app_id=assignment.screen.app_id)

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {"suggestion": self.suggestion(assignment=assignment)}

    # --- model assistance (docs/assist.md) ----------------------------------------------------

    def suggestion(self, *, assignment: Assignment) -> dict[str, Any] | None:
        # Control items read their suggestion exactly as real work does (no tell).
        return suggestion_for(project=assignment.project, screen_id=assignment.screen_id, assignment=assignment)

    def suggestion_use(self, *, suggestion: dict[str, Any] | None, cleaned: dict[str, Any]) -> str:
        """``accepted``: both judgments as suggested; ``edited``: a suggestion was shown and a judgment
        differs; ``none``: none was shown. (An annotator who agrees with the model after judging for
        themselves counts as accepted too: no one can tell the two apart, which is why the rule looks
        only at control items whose suggestion was wrong.)"""
        if not suggestion or not suggestion.get("judgments"):
            return SuggestionUse.NONE
        same = all(bool(cleaned.get(name)) == bool(suggestion["judgments"].get(name)) for name in JUDGMENTS)
        return SuggestionUse.ACCEPTED if same else SuggestionUse.EDITED

    def suggestion_submission(self, *, suggestion: dict[str, Any], cleaned: dict[str, Any]) -> dict[str, Any]:
        return {name: bool(suggestion["judgments"].get(name)) for name in JUDGMENTS}

    # --- quality control -------------------------------------------------------------------

    def gold_answer(self, *, submission: dict[str, Any]) -> dict[str, Any]:
        return {"non_english_app": submission["non_english_app"], "vh_out_of_sync": submission["vh_out_of_sync"]}

    def gold_unit_waiting(self) -> Exists:
        # An EXISTS, not a join (as the answers stage's): only the screens waiting here are read
        return Exists(Screen.objects.filter(pk=OuterRef("screen_id"), state=ScreenState.PREFILTER))

    def gold_score(self, *, given: dict[str, Any], gold: dict[str, Any], project: Project) -> tuple[bool, str]:
        """Both judgments equal."""
        wrong = [
            label
            for key, label in (("non_english_app", "non-English app"), ("vh_out_of_sync", "VH out of sync"))
            if bool(given.get(key)) != bool(gold.get(key))
        ]
        return (not wrong, "" if not wrong else f"Judged differently: {', '.join(wrong)}.")

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        """The judgment is withdrawn; its screen is decided again if its decision rested on it."""
        judgments_withdraw(
            PrefilterJudgment.objects.filter(assignment=reviewed), reason=REASON_REVIEW_REJECTED, now=now
        )

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        rejected = PrefilterJudgment.objects.filter(assignment=reviewed, withdrawn_reason=REASON_REVIEW_REJECTED)
        return judgments_restore(rejected, now=now)

    def withdraw(
        self,
        *,
        project: Project,
        user: Any,
        requeue: bool,
        now: datetime,
        event: QualityEvent | None = None,
        assignments: Collection[int] | None = None,
    ) -> int:
        """Every judgment of the stopped judge is withdrawn (``judgments_withdraw``). ``requeue`` makes
        no difference here: a screen whose decision rested on them cannot be decided without judges,
        so it goes back to pre-filtering either way."""
        mine = PrefilterJudgment.objects.filter(screen__project=project, annotator=user)
        if assignments is not None:
            mine = mine.filter(assignment_id__in=list(assignments))
        return judgments_withdraw(mine, reason=REASON_WITHDRAWN, now=now, event=event)["withdrawn"]

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        mine = PrefilterJudgment.objects.filter(screen__project=project, annotator=user, withdrawn_by=event)
        return judgments_restore(mine, now=now)

    # --- the page ----------------------------------------------------------------------------

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        """The model's suggestion (docs/assist.md), shown the same way on control items."""
        return {"suggestion": payload.get("suggestion")}

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        return {
            "non_english_app": form_flag(post, "non_english_app"),
            "vh_out_of_sync": form_flag(post, "vh_out_of_sync"),
            "note": form_text(post, "note"),
        }

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        return {
            "non_english_app": form_flag(post, "non_english_app"),
            "vh_out_of_sync": form_flag(post, "vh_out_of_sync"),
            "note": post.get("note", ""),
        }

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        lines = [
            (label, "yes" if draft[key] else "no")
            for key, label in (("non_english_app", "Non-English app"), ("vh_out_of_sync", "VH out of sync"))
            if key in draft
        ]
        if isinstance(draft.get("note"), str) and draft["note"].strip():
            lines.append(("Note", draft["note"]))
        return lines

    # --- progress and crowd ------------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        return screens.get(ScreenState.PREFILTER, 0)

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """~17% of apps non-English (the paper: 11k of 66k screens), ~20% of the other screens
        out of sync (13k of 55k); each judge errs with the actor's noise."""
        suggestion = payload.get("suggestion")
        if suggestion and actor.rng.random() < getattr(actor, "accepts_suggestions", 0.0):
            return {**suggestion["judgments"], "note": ""}  # a stamper: the model's judgments unchanged
        screen = payload["screen"]
        non_english = crowd_share(f"lang:{screen['app']}") < 0.17
        out_of_sync = crowd_share(f"sync:{screen['rico_id']}") < 0.20
        note = "menu over the content" if out_of_sync and actor.rng.random() < 0.3 else ""
        return {
            "non_english_app": actor.noisy(non_english),
            "vh_out_of_sync": actor.noisy(out_of_sync),
            "note": note,
        }


def _language_tally(
    judgments: QuerySet[PrefilterJudgment], *, project: Project, needed: int
) -> dict[int, tuple[int, int]]:
    """Per app id, ``(judged, non_english)`` over ``judgments``: the screens with their ``needed``
    judgments, and those of them whose judges said non-English, by the rule that decides the screen:
    a plain majority with one judge per screen (one grouped query), each vote weighed by its judge's
    reliability with several (``judge_weights``: two queries). A careless judge's "non-English" that a
    reliable judge's "no" outweighed does not count the screen non-English for its app either, so a
    spammer paired with careful judges cannot make a whole app non-English on ties."""
    tally: dict[int, tuple[int, int]] = {}

    def count(app_id: int, non_english: bool) -> None:
        judged, yes = tally.get(app_id, (0, 0))
        tally[app_id] = (judged + 1, yes + int(non_english))

    if needed < 2:
        rows = judgments.values("screen_id", "screen__app_id").annotate(
            n=Count("pk"), yes=Count("pk", filter=Q(non_english_app=True))
        )
        for row in rows:
            if row["n"] >= needed:
                count(row["screen__app_id"], _majority(row["yes"], row["n"]))
        return tally
    screens: dict[int, tuple[int, list[tuple[int, bool]]]] = {}
    for screen_id, app_id, judge, non_english in judgments.values_list(
        "screen_id", "screen__app_id", "annotator_id", "non_english_app"
    ):
        screens.setdefault(screen_id, (app_id, []))[1].append((judge, non_english))
    weights = judge_weights(project=project, user_ids=sorted({j for _, votes in screens.values() for j, _ in votes}))
    for app_id, votes in screens.values():
        if len(votes) >= needed:
            decided = prefilter_decide_weighted([(ne, False, weights[judge]) for judge, ne in votes])
            count(app_id, decided == REASON_NON_ENGLISH)
    return tally


def app_language_votes(*, app: App) -> tuple[int, int]:
    """``(judged, non_english)``: the app's screens with a pre-filtering decision, and those of
    them whose judges said non-English (by the rule that decides the screen: ``_language_tally``);
    withdrawn judgments do not count."""
    tally = _language_tally(
        _counting().filter(screen__app=app), project=app.project, needed=app.project.prefilter_judgments
    )
    return tally.get(app.pk, (0, 0))


def app_rule_says_non_english(*, app: App) -> bool:
    """The project's app-language rule: at least ``app_non_english_screens`` of the app's decided
    screens, and at least ``app_non_english_share`` of them, were judged non-English."""
    judged, non_english = app_language_votes(app=app)
    project = app.project
    return non_english >= project.app_non_english_screens and non_english >= project.app_non_english_share * judged


def _app_exclude(*, app: App, now: Any) -> dict[str, Any]:
    """Every screen of a non-English app leaves every queue and the release: screens excluded
    (in id order, whatever their state), open leases on them ended, their questions dropped.
    Caller holds the project's lock."""
    screens = list(
        Screen.objects.select_for_update()
        .filter(app=app)
        .exclude(state=ScreenState.EXCLUDED)
        .order_by("pk")
        .values_list("pk", "state")
    )
    by_state: dict[str, list[int]] = {}
    for pk, state in screens:
        by_state.setdefault(state, []).append(pk)
    for state, ids in by_state.items():  # one update per state the screens leave
        Screen.objects.filter(pk__in=ids).update(
            state=ScreenState.EXCLUDED, exclusion_reason=REASON_NON_ENGLISH, excluded_from=state
        )
    ids = [pk for pk, _ in screens]
    assignment_leases_end(leases=Assignment.objects.filter(screen_id__in=ids), now=now, status=AssignmentStatus.EXPIRED)
    dropped = (
        Question.objects.filter(screen_id__in=ids)
        .exclude(state=QuestionState.DROPPED)
        .update(state=QuestionState.DROPPED, drop_reason=REASON_NON_ENGLISH_APP, dropped_from=F("state"))
    )
    return {
        "excluded": len(ids),
        "excluded_by_state": {state: len(ids) for state, ids in by_state.items()},
        "questions_dropped": dropped,
    }


def _app_restore(*, app: App, language: bool) -> dict[str, Any]:
    """Undo the app's language exclusions: every screen of the app excluded as non-English returns to
    where it was. A screen the app's decision excluded goes back to the state it left
    (``excluded_from``); a screen its own judges excluded as non-English is decided again by the
    judgments that count: without the language votes when a lead declared the app English
    (``language`` False: out of sync by its judges' majority, else on to the question passes), with
    them when the app is undecided again (``language`` True: the app rule no longer holds, so its
    judges' "non-English" still excludes it); back to pre-filtering when the judgments that count do
    not decide it. Questions
    dropped with ``non-english-app`` return to the state they left (or,
    without a record of it, to the state their screen and answers imply). Screens excluded as out
    of sync stay excluded. Caller holds the project's lock; the screens are locked in id order."""
    screens = list(
        Screen.objects.select_for_update()
        .filter(app=app, state=ScreenState.EXCLUDED, exclusion_reason=REASON_NON_ENGLISH)
        .order_by("pk")
        .values_list("pk", "excluded_from")
    )
    votes = _tally([pk for pk, was in screens if not was])
    needed = app.project.prefilter_judgments
    targets: dict[tuple[str, str], list[int]] = {}  # (state, exclusion reason) -> screens
    for pk, was in screens:
        if was:
            target = (was, "")
        else:
            n, non_english, out_of_sync = votes.get(pk, (0, 0, 0))
            reason = prefilter_settled(
                votes_non_english=non_english if language else 0,
                votes_out_of_sync=out_of_sync,
                judgments=n,
                needed=needed,
                language=language,
            )
            if reason is None:  # its judgments that count do not decide it (some were withdrawn)
                target = (ScreenState.PREFILTER, "")
            else:
                target = (ScreenState.EXCLUDED, reason) if reason else (ScreenState.QUESTIONS_1, "")
        targets.setdefault(target, []).append(pk)
    for (state, reason), ids in targets.items():
        Screen.objects.filter(pk__in=ids).update(state=state, exclusion_reason=reason, excluded_from="")
    state_of = {pk: state for (state, _), ids in targets.items() for pk in ids}
    questions: dict[str, list[int]] = {}
    for pk, screen_id, was, done, needed in Question.objects.filter(
        screen_id__in=list(state_of), state=QuestionState.DROPPED, drop_reason=REASON_NON_ENGLISH_APP
    ).values_list("pk", "screen_id", "dropped_from", "answers_done", "answers_needed"):
        if not was:  # dropped before the state was recorded: what its screen and answers imply
            if state_of[screen_id] in (ScreenState.QUESTIONS_1, ScreenState.QUESTIONS_2):
                was = QuestionState.DRAFTING
            else:
                was = QuestionState.ANSWERED if needed and done >= needed else QuestionState.ANSWERING
        questions.setdefault(was, []).append(pk)
    for state, ids in questions.items():
        Question.objects.filter(pk__in=ids).update(state=state, drop_reason="", dropped_from="")
    restored = [(pk, state) for pk, state in state_of.items() if state != ScreenState.EXCLUDED]
    by_state: dict[str, int] = {}
    for _, state in restored:
        by_state[state] = by_state.get(state, 0) + 1
    return {
        "restored": len(restored),
        "restored_by_state": by_state,
        "questions_restored": sum(len(ids) for ids in questions.values()),
    }


# --- judgments withdrawn by quality control, and brought back ----------------------------------


def judgments_withdraw(
    judgments: QuerySet[PrefilterJudgment], *, reason: str, now: datetime, event: QualityEvent | None = None
) -> dict[str, int]:
    """Withdraw ``judgments`` (``reason``: a quality reason code; ``event``: the decision, so that a
    lead overturning it brings them back) and undo what they decided (the module docstring).

    Returns ``{"withdrawn", "screens_requeued", "screens_further_along"}``. Locks the judgments'
    screens in id order; the app-language decisions are checked again once the transaction
    commits (``app_language_recheck`` takes the project's lock, which must come first)."""
    rows = list(judgments.filter(withdrawn_reason="").values_list("pk", "screen_id", "screen__project_id"))
    if not rows:
        return {"withdrawn": 0, "screens_requeued": 0, "screens_further_along": 0}
    PrefilterJudgment.objects.filter(pk__in=[pk for pk, _, _ in rows]).update(
        withdrawn_reason=reason, withdrawn_by=event
    )
    screen_ids = sorted({screen_id for _, screen_id, _ in rows})
    moved = _screens_reopen(screen_ids=screen_ids, now=now)
    _app_recheck_later(project_id=rows[0][2], screen_ids=screen_ids)
    return {"withdrawn": len(rows), **moved}


def _own_decision(screen: Screen) -> str | None:
    """What the screen's own judges decided: its exclusion reason, ``""`` (it went on), or ``None``
    (held by its app while waiting in pre-filtering: not decided)."""
    if screen.state != ScreenState.EXCLUDED or screen.excluded_from not in ("", ScreenState.PREFILTER):
        return ""
    return screen.exclusion_reason if not screen.excluded_from else None


def _screens_reopen(*, screen_ids: list[int], now: datetime) -> dict[str, int]:
    """After judgments on ``screen_ids`` were withdrawn: a screen whose decision the judgments that
    still count do not force is decided again. Excluded by its own judges, or moved on to pass 1
    without a pass-1 submission yet: back to pre-filtering (held excluded, from pre-filtering, while
    its app is non-English). Excluded by its app's decision from pass 1: it will return to
    pre-filtering, not pass 1, if the app is restored. Further along (questions written): left as
    it is. Locks the screens in id order.

    "Force" is counted on votes. With several judges per screen the decision was weighed by the
    judges' reliability, so a decision the remaining votes force is kept only when it is the one the
    screen has: a reliable judge's withdrawn "no" that outweighed a lone "non-English" sends the
    screen back, though that vote alone forces "non-English" by count."""
    screens = list(Screen.objects.select_for_update().filter(pk__in=screen_ids).order_by("pk"))
    if not screens:
        return {"screens_requeued": 0, "screens_further_along": 0}
    needed = Project.objects.values_list("prefilter_judgments", flat=True).get(pk=screens[0].project_id)
    app_ids = {screen.app_id for screen in screens}
    english = set(
        App.objects.filter(pk__in=app_ids, non_english=False, language_set_by="lead").values_list("pk", flat=True)
    )
    non_english = set(App.objects.filter(pk__in=app_ids, non_english=True).values_list("pk", flat=True))
    tally = _tally(screen_ids)
    back: list[int] = []  # to pre-filtering
    held: list[int] = []  # excluded by their app: from pre-filtering now
    further = 0
    for screen in screens:
        n, ne, oos = tally.get(screen.pk, (0, 0, 0))
        settled = prefilter_settled(
            votes_non_english=ne,
            votes_out_of_sync=oos,
            judgments=n,
            needed=needed,
            language=screen.app_id not in english,
        )
        state, was = screen.state, screen.excluded_from
        if state == ScreenState.PREFILTER or (settled is not None and settled == _own_decision(screen)):
            continue  # none was made yet (their places are free again), or the decision stands without them
        if (state == ScreenState.EXCLUDED and not was) or state == ScreenState.QUESTIONS_1:
            (held if screen.app_id in non_english else back).append(screen.pk)
        elif state == ScreenState.EXCLUDED and was == ScreenState.QUESTIONS_1:
            held.append(screen.pk)
        elif not (state == ScreenState.EXCLUDED and was == ScreenState.PREFILTER):
            further += 1  # questions are written on it: it stays (the manifest reports its evidence)
    if back:
        Screen.objects.filter(pk__in=back).update(state=ScreenState.PREFILTER, exclusion_reason="", excluded_from="")
    if held:
        Screen.objects.filter(pk__in=held).update(
            state=ScreenState.EXCLUDED, exclusion_reason=REASON_NON_ENGLISH, excluded_from=ScreenState.PREFILTER
        )
    # A pass-1 writer holding one of them: their lease ends (the draft stays).
    writers = Assignment.objects.filter(screen_id__in=back + held, stage=Stage.QUESTIONS_1)
    assignment_leases_end(leases=writers, now=now, status=AssignmentStatus.EXPIRED)
    return {"screens_requeued": len(back) + len(held), "screens_further_along": further}


def judgments_restore(judgments: QuerySet[PrefilterJudgment], *, now: datetime) -> dict[str, int]:
    """Bring withdrawn ``judgments`` back where nobody redid them: a screen waiting in pre-filtering
    with a free place (judgments that count plus other judges' live leases under the number the
    project takes), or a screen that stayed where it was (it has fewer judgments that count than
    that). A screen waiting in pre-filtering whose judgments are then complete is decided. Others
    stay withdrawn (``redone``). Locks the screens in id order; apps are checked again after commit."""
    rows = list(judgments.exclude(withdrawn_reason="").values_list("pk", "screen_id", "screen__project_id"))
    if not rows:
        return {"restored": 0, "redone": 0}
    screen_ids = sorted({screen_id for _, screen_id, _ in rows})
    screens = {s.pk: s for s in Screen.objects.select_for_update().filter(pk__in=screen_ids).order_by("pk")}
    needed = Project.objects.values_list("prefilter_judgments", flat=True).get(pk=rows[0][2])
    tally = _tally(screen_ids)
    live = dict(
        Assignment.objects.filter(live_q(now), screen_id__in=screen_ids, stage=Stage.PREFILTER)
        .values_list("screen_id")
        .annotate(n=Count("pk"))
        .values_list("screen_id", "n")
    )
    back: list[int] = []
    for pk, screen_id, _ in rows:
        n = tally.get(screen_id, (0, 0, 0))[0]
        waiting = screens[screen_id].state == ScreenState.PREFILTER
        if (n + live.get(screen_id, 0) < needed) if waiting else (n < needed):
            back.append(pk)
            n0, ne, oos = tally.get(screen_id, (0, 0, 0))
            tally[screen_id] = (n0 + 1, ne, oos)  # counted at once: one judge has one judgment per screen
    PrefilterJudgment.objects.filter(pk__in=back).update(withdrawn_reason="", withdrawn_by=None)
    _screens_decide(screens=[screens[s] for s in screen_ids], needed=needed)
    _app_recheck_later(project_id=rows[0][2], screen_ids=screen_ids)
    return {"restored": len(back), "redone": len(rows) - len(back)}


def _screens_decide(*, screens: list[Screen], needed: int) -> None:
    """Decide the screens among ``screens`` (locked) that wait in pre-filtering (or are held excluded
    by their app from it) and now have all their judgments, as the last judgment's submit does (one
    rule, ``_screen_reason``: weighed by the judges' reliability with several judges per screen)."""
    waiting = [
        s
        for s in screens
        if s.state == ScreenState.PREFILTER
        or (s.state == ScreenState.EXCLUDED and s.excluded_from == ScreenState.PREFILTER)
    ]
    if not waiting:
        return
    votes: dict[int, list[tuple[int, bool, bool]]] = {}
    for screen_id, judge, non_english, out_of_sync in (
        _counting()
        .filter(screen_id__in=[s.pk for s in waiting])
        .values_list("screen_id", "annotator_id", "non_english_app", "vh_out_of_sync")
    ):
        votes.setdefault(screen_id, []).append((judge, non_english, out_of_sync))
    english = set(
        App.objects.filter(pk__in={s.app_id for s in waiting}, non_english=False, language_set_by="lead").values_list(
            "pk", flat=True
        )
    )
    weights = (
        judge_weights(project=waiting[0].project, user_ids=sorted({v[0] for rows in votes.values() for v in rows}))
        if needed >= 2
        else None
    )
    for screen in waiting:
        if len(votes.get(screen.pk, ())) < needed:
            continue
        reason = _screen_reason(votes[screen.pk], needed=needed, english=screen.app_id in english, weights=weights)
        if screen.state == ScreenState.PREFILTER:
            state = ScreenState.EXCLUDED if reason else ScreenState.QUESTIONS_1
            Screen.objects.filter(pk=screen.pk).update(state=state, exclusion_reason=reason)
        elif reason:  # held by its app, and excluded by its own judges too
            Screen.objects.filter(pk=screen.pk).update(exclusion_reason=reason, excluded_from="")
        else:  # held by its app; it would go on to pass 1
            Screen.objects.filter(pk=screen.pk).update(excluded_from=ScreenState.QUESTIONS_1)


def _app_recheck_later(*, project_id: int, screen_ids: list[int]) -> None:
    """Check the language of the screens' apps again once the caller's transaction commits."""
    app_ids = sorted(set(Screen.objects.filter(pk__in=screen_ids).values_list("app_id", flat=True)))
    if app_ids:
        # robust: a failure is logged and does not turn the committed pause into an error response
        transaction.on_commit(lambda: app_language_recheck(project_id=project_id, app_ids=app_ids), robust=True)


@transaction.atomic
def app_language_recheck(*, project_id: int, app_ids: list[int]) -> dict[str, list[str]]:
    """Apply the project's app-language rule again to apps whose votes changed (judgments were
    withdrawn or brought back): an app the rule made non-English that no longer meets it is
    restored (``_app_restore``; it is undecided again), an undecided app that now meets it becomes
    non-English. A lead's decision is never touched. Idempotent. Locks the project."""
    project_lock(project_id=project_id)
    done: dict[str, list[str]] = {"restored": [], "excluded": []}
    for app in App.objects.select_related("project").filter(pk__in=app_ids, project_id=project_id).order_by("pk"):
        if app.language_set_by == "lead":
            continue
        decided = app_rule_says_non_english(app=app)
        if app.non_english and not decided:
            app.non_english, app.language_set_by = False, ""
            app.save(update_fields=["non_english", "language_set_by"])
            _app_restore(app=app, language=True)  # undecided again: its screens' own votes count
            done["restored"].append(app.package)
        elif decided and not app.non_english:
            app.non_english, app.language_set_by = True, "rule"
            app.save(update_fields=["non_english", "language_set_by"])
            _app_exclude(app=app, now=timezone.now())
            done["excluded"].append(app.package)
    return done


@transaction.atomic
def app_language_check(*, project: Project, app_id: int) -> bool:
    """Apply the project's app-language rule to one app (after one of its screens was judged).
    Locks the project. Returns whether the app became non-English."""
    project_lock(project_id=project.pk)
    app = App.objects.select_related("project").filter(pk=app_id, project=project).first()
    if app is None or app.non_english or app.language_set_by == "lead":
        return False
    decided = app_rule_says_non_english(app=app)
    if not decided:
        return False
    app.non_english, app.language_set_by = True, "rule"
    app.save(update_fields=["non_english", "language_set_by"])
    _app_exclude(app=app, now=timezone.now())
    return True


@transaction.atomic
def app_mark_non_english(*, project: Project, package: str, english: bool = False) -> dict[str, Any]:
    """A lead decides an app's language (the rule never overrides it).

    Non-English (default): every screen of the app leaves every queue and the release, whatever
    its state (questions on them are dropped with ``non-english-app``). ``english``: the app is
    English: the rule will not exclude it, its judges' language votes no longer count, and every
    screen excluded as non-English returns to where it was, its dropped questions with it
    (``_app_restore``). Idempotent. Locks the project, then the app's screens in id order. Returns
    ``{"app", "non_english", "language_set_by", "excluded", "excluded_by_state", "questions_dropped",
    "restored", "restored_by_state", "questions_restored", "judged", "judged_non_english"}``.
    """
    project_lock(project_id=project.pk)
    app = App.objects.select_related("project").filter(project=project, package=package).first()
    if app is None:
        raise NotFoundError("App not found.", field="package")
    app.non_english, app.language_set_by = not english, "lead"
    app.save(update_fields=["non_english", "language_set_by"])
    done: dict[str, Any] = {"excluded": 0, "excluded_by_state": {}, "questions_dropped": 0}
    undone: dict[str, Any] = {"restored": 0, "restored_by_state": {}, "questions_restored": 0}
    if english:
        undone = _app_restore(app=app, language=False)
    else:
        done = _app_exclude(app=app, now=timezone.now())
    judged, non_english = app_language_votes(app=app)
    return {
        "app": app.package,
        "non_english": not english,
        "language_set_by": "lead",
        **done,
        **undone,
        "judged": judged,
        "judged_non_english": non_english,
    }


@dataclass(frozen=True)
class AppLanguage:
    """One app on the lead's actions page: its language decision and the judges' votes."""

    package: str
    non_english: bool
    language_set_by: str  # "" (undecided), "rule" or "lead"
    judged: int  # screens with a pre-filtering decision
    judged_non_english: int  # ... whose judges said non-English

    @property
    def decision(self) -> str:
        if self.non_english:
            return "non-English"
        return "English" if self.language_set_by == "lead" else "undecided"


def app_language_list(*, project: Project, app_ids: list[int] | None = None) -> list[AppLanguage]:
    """Every app of the project (or those of ``app_ids``, a page of them) by package, with its
    ``app_language_votes`` (two queries, three with several judges per screen; with ``app_ids`` only
    those apps' judgments are counted)."""
    judgments = _counting().filter(screen__project=project)
    apps = App.objects.filter(project=project)
    if app_ids is not None:
        judgments, apps = judgments.filter(screen__app_id__in=app_ids), apps.filter(pk__in=app_ids)
    tally = _language_tally(judgments, project=project, needed=project.prefilter_judgments) if app_ids != [] else {}
    return [
        AppLanguage(package, non_english, set_by, *tally.get(pk, (0, 0)))
        for pk, package, non_english, set_by in apps.order_by("package").values_list(
            "pk", "package", "non_english", "language_set_by"
        )
    ]

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
manifest with the other drop reasons).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.http import QueryDict
from django.utils import timezone

from annotation.exceptions import ConflictError, NotFoundError
from annotation.lock_objects import project_lock
from annotation.models import (
    App,
    Assignment,
    AssignmentStatus,
    PrefilterJudgment,
    Project,
    Question,
    QuestionState,
    Screen,
    ScreenState,
    Stage,
)
from annotation.services.assignments import assignment_leases_end
from pipeline.release.decide import REASON_NON_ENGLISH_APP

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


class PrefilterSubmitSerializer(StrictSerializer):
    non_english_app = FlagField(help_text="the app is not in English (a property of the app)")
    vh_out_of_sync = FlagField(help_text="VH out of sync with the pixels in the main content")
    note = TextField(max_length=NOTE_MAX, required=False, allow_blank=True, default="")


class PrefilterPayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.PREFILTER)


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
            taken = (
                Assignment.objects.filter(live_q(now) | Q(status=AssignmentStatus.SUBMITTED), stage=self.name)
                .values("screen_id")
                .annotate(n=Count("pk"))
                .filter(n__gte=project.prefilter_judgments)
                .values("screen_id")
            )
            qs = qs.exclude(pk__in=taken)
        return qs.order_by("pk")

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
        return others.count() < screen.project.prefilter_judgments

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
        judgments = PrefilterJudgment.objects.filter(screen=screen).aggregate(
            n=Count("pk"),
            non_english=Count("pk", filter=Q(non_english_app=True)),
            out_of_sync=Count("pk", filter=Q(vh_out_of_sync=True)),
        )
        needed = screen.project.prefilter_judgments
        if judgments["n"] < needed:
            return
        # a lead's "English" outweighs the judges' language votes (asked only when there are some)
        declared_english = (
            judgments["non_english"] > 0
            and App.objects.filter(pk=screen.app_id, non_english=False, language_set_by="lead").exists()
        )
        reason = prefilter_decide(
            votes_non_english=0 if declared_english else judgments["non_english"],
            votes_out_of_sync=judgments["out_of_sync"],
            judgments=needed,
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
        """A judgment of non-English may make the whole app non-English (the project's rule)."""
        if (assignment.submission or {}).get("non_english_app") and assignment.screen.app_id is not None:
            app_language_check(project=assignment.project, app_id=assignment.screen.app_id)

    # --- quality control -------------------------------------------------------------------

    def gold_answer(self, *, submission: dict[str, Any]) -> dict[str, Any]:
        return {"non_english_app": submission["non_english_app"], "vh_out_of_sync": submission["vh_out_of_sync"]}

    def gold_score(self, *, given: dict[str, Any], gold: dict[str, Any], project: Project) -> tuple[bool, str]:
        """Both judgments equal."""
        wrong = [
            label
            for key, label in (("non_english_app", "non-English app"), ("vh_out_of_sync", "VH out of sync"))
            if bool(given.get(key)) != bool(gold.get(key))
        ]
        return (not wrong, "" if not wrong else f"Judged differently: {', '.join(wrong)}.")

    # --- the page ----------------------------------------------------------------------------

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
        screen = payload["screen"]
        non_english = crowd_share(f"lang:{screen['app']}") < 0.17
        out_of_sync = crowd_share(f"sync:{screen['rico_id']}") < 0.20
        note = "menu over the content" if out_of_sync and actor.rng.random() < 0.3 else ""
        return {
            "non_english_app": actor.noisy(non_english),
            "vh_out_of_sync": actor.noisy(out_of_sync),
            "note": note,
        }


def _language_tally(judgments: QuerySet[PrefilterJudgment], *, needed: int) -> dict[int, tuple[int, int]]:
    """Per app id, ``(judged, non_english)`` over ``judgments``: one grouped query (a row per screen)."""
    tally: dict[int, tuple[int, int]] = {}
    rows = judgments.values("screen_id", "screen__app_id").annotate(
        n=Count("pk"), yes=Count("pk", filter=Q(non_english_app=True))
    )
    for row in rows:
        if row["n"] >= needed:
            judged, non_english = tally.get(row["screen__app_id"], (0, 0))
            tally[row["screen__app_id"]] = (judged + 1, non_english + int(_majority(row["yes"], row["n"])))
    return tally


def app_language_votes(*, app: App) -> tuple[int, int]:
    """``(judged, non_english)``: the app's screens with a pre-filtering decision, and those of
    them whose judges said non-English (by the screen's own majority)."""
    tally = _language_tally(PrefilterJudgment.objects.filter(screen__app=app), needed=app.project.prefilter_judgments)
    return tally.get(app.pk, (0, 0))


def app_rule_says_non_english(*, app: App) -> tuple[bool, dict[str, Any]]:
    judged, non_english = app_language_votes(app=app)
    project = app.project
    decided = non_english >= project.app_non_english_screens and non_english >= project.app_non_english_share * judged
    return decided, {"judged": judged, "non_english": non_english}


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


def _app_restore(*, app: App) -> dict[str, Any]:
    """Undo the app's language exclusions (a lead declared it English): every screen of the app
    excluded as non-English returns to where it was. A screen the app's decision excluded goes back
    to the state it left (``excluded_from``); a screen its own judges excluded as non-English is
    decided again without the language votes (out of sync by its judges' majority, else on to the
    question passes). Questions dropped with ``non-english-app`` return to the state they left (or,
    without a record of it, to the state their screen and answers imply). Screens excluded as out
    of sync stay excluded. Caller holds the project's lock; the screens are locked in id order."""
    screens = list(
        Screen.objects.select_for_update()
        .filter(app=app, state=ScreenState.EXCLUDED, exclusion_reason=REASON_NON_ENGLISH)
        .order_by("pk")
        .values_list("pk", "excluded_from")
    )
    own = [pk for pk, was in screens if not was]
    votes = {
        row["screen_id"]: row
        for row in PrefilterJudgment.objects.filter(screen_id__in=own)
        .values("screen_id")
        .annotate(n=Count("pk"), out_of_sync=Count("pk", filter=Q(vh_out_of_sync=True)))
    }
    targets: dict[tuple[str, str], list[int]] = {}  # (state, exclusion reason) -> screens
    for pk, was in screens:
        if was:
            target = (was, "")
        else:
            row = votes.get(pk, {"n": 0, "out_of_sync": 0})
            reason = prefilter_decide(votes_non_english=0, votes_out_of_sync=row["out_of_sync"], judgments=row["n"])
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


@transaction.atomic
def app_language_check(*, project: Project, app_id: int) -> bool:
    """Apply the project's app-language rule to one app (after one of its screens was judged).
    Locks the project. Returns whether the app became non-English."""
    project_lock(project_id=project.pk)
    app = App.objects.select_related("project").filter(pk=app_id, project=project).first()
    if app is None or app.non_english or app.language_set_by == "lead":
        return False
    decided, _ = app_rule_says_non_english(app=app)
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
        undone = _app_restore(app=app)
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


def app_language_list(*, project: Project) -> list[AppLanguage]:
    """Every app of the project by package, with its ``app_language_votes`` (two queries)."""
    tally = _language_tally(
        PrefilterJudgment.objects.filter(screen__project=project), needed=project.prefilter_judgments
    )
    return [
        AppLanguage(package, non_english, set_by, *tally.get(pk, (0, 0)))
        for pk, package, non_english, set_by in App.objects.filter(project=project)
        .order_by("package")
        .values_list("pk", "package", "non_english", "language_set_by")
    ]

"""Pre-filtering (per screen): *app is non-English* and *VH out of sync in the main content*.

``project.prefilter_judgments`` (N, default 1) annotators judge each screen; when the N-th
judgment arrives the majority decides. **A tie excludes** (N even, half say "exclude"):
a screen that half the judges doubt is not worth questions and answers; precision of
the released data beats recall (documented in docs/engine.md). Non-English wins over
out-of-sync as the reason kept on the screen (it is a property of the app); every
judgment stays in ``PrefilterJudgment``.

A lead may mark a whole app non-English (``app_mark_non_english``): its screens still
waiting for pre-filtering are excluded at once and their open leases expire; screens
already further along are left as they are (work was invested; post-processing or the
lead decides) and reported by state.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
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
    Screen,
    ScreenState,
    Stage,
)

from .base import StageDefinition, crowd_share, form_flag, form_text, live_q, taken_by_user_q
from .units import SCREEN
from .wire import NOTE_MAX, FlagField, StrictSerializer, TextField

REASON_NON_ENGLISH = "non_english"
REASON_OUT_OF_SYNC = "vh_out_of_sync"
# How the reasons read on the lead's pages.
EXCLUSION_REASONS = {REASON_NON_ENGLISH: "non-English app", REASON_OUT_OF_SYNC: "VH out of sync"}


def prefilter_decide(*, votes_non_english: int, votes_out_of_sync: int, judgments: int) -> str:
    """The exclusion reason ("" = the screen goes on). Ties exclude."""
    if votes_non_english * 2 >= judgments and votes_non_english > 0:
        return REASON_NON_ENGLISH
    if votes_out_of_sync * 2 >= judgments and votes_out_of_sync > 0:
        return REASON_OUT_OF_SYNC
    return ""


class PrefilterSubmitSerializer(StrictSerializer):
    non_english_app = FlagField(help_text="the app is not in English (a property of the app)")
    vh_out_of_sync = FlagField(help_text="VH out of sync with the pixels in the main content")
    note = TextField(max_length=NOTE_MAX, required=False, allow_blank=True, default="")


class Prefilter(StageDefinition):
    name = Stage.PREFILTER
    label = "Pre-filtering"
    short_label = "Pre-filter"
    unit = SCREEN
    queue_inputs = ("prefilter_judgments",)  # one judge or several: two different queries
    submit_serializer = PrefilterSubmitSerializer
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
        reason = prefilter_decide(
            votes_non_english=judgments["non_english"], votes_out_of_sync=judgments["out_of_sync"], judgments=needed
        )
        if reason:
            screen.state = ScreenState.EXCLUDED
            screen.exclusion_reason = reason
        else:
            screen.state = ScreenState.QUESTIONS_1
        screen.save(update_fields=["state", "exclusion_reason"])
        # Any other judge still holding this screen (N > 1) is done: their lease ends.
        Assignment.objects.filter(screen=screen, stage=self.name, status=AssignmentStatus.LEASED).exclude(
            pk=assignment.pk
        ).update(status=AssignmentStatus.EXPIRED, updated_at=now)

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


@transaction.atomic
def app_mark_non_english(*, project: Project, package: str) -> dict[str, Any]:
    """A lead marks a whole app non-English.

    Idempotent. Locks the project (one project-wide action at a time), then the app's
    screens in pre-filtering (in id order), then their assignments. Returns
    ``{"app", "non_english", "excluded", "further_along": {state: count}}``.
    """
    project_lock(project_id=project.pk)
    app = App.objects.filter(project=project, package=package).first()
    if app is None:
        raise NotFoundError("App not found.", field="package")
    if not app.non_english:
        app.non_english = True
        app.save(update_fields=["non_english"])
    now = timezone.now()
    waiting = list(
        Screen.objects.select_for_update()
        .filter(app=app, state=ScreenState.PREFILTER)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    Screen.objects.filter(pk__in=waiting).update(state=ScreenState.EXCLUDED, exclusion_reason=REASON_NON_ENGLISH)
    Assignment.objects.filter(screen_id__in=waiting, stage=Stage.PREFILTER, status=AssignmentStatus.LEASED).update(
        status=AssignmentStatus.EXPIRED, updated_at=now
    )
    further = (
        Screen.objects.filter(app=app)
        .exclude(state__in=[ScreenState.PREFILTER, ScreenState.EXCLUDED])
        .values("state")
        .annotate(n=Count("pk"))
    )
    return {
        "app": app.package,
        "non_english": True,
        "excluded": len(waiting),
        "further_along": {row["state"]: row["n"] for row in further},
    }

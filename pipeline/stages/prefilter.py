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

from .base import StageRules, clean_bool, clean_text, live_q, require_keys, screen_has, taken_by_user_q

REASON_NON_ENGLISH = "non_english"
REASON_OUT_OF_SYNC = "vh_out_of_sync"


def prefilter_decide(*, votes_non_english: int, votes_out_of_sync: int, judgments: int) -> str:
    """The exclusion reason ("" = the screen goes on). Ties exclude."""
    if votes_non_english * 2 >= judgments and votes_non_english > 0:
        return REASON_NON_ENGLISH
    if votes_out_of_sync * 2 >= judgments and votes_out_of_sync > 0:
        return REASON_OUT_OF_SYNC
    return ""


class PrefilterRules(StageRules):
    stage = Stage.PREFILTER
    label = "Pre-filtering"

    def queue_shape(self, *, project: Project) -> tuple[Any, ...] | None:
        return (project.prefilter_judgments,)  # one judge or several: two different queries

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        qs = Screen.objects.filter(project=project, state=ScreenState.PREFILTER, app__non_english=False).exclude(
            screen_has(self.stage, taken_by_user_q(user))
        )
        if project.prefilter_judgments == 1:
            qs = qs.exclude(screen_has(self.stage, live_q(now)))
        else:
            # Several judges per screen: live leases plus judgments so far must stay under N.
            taken = (
                Assignment.objects.filter(live_q(now) | Q(status=AssignmentStatus.SUBMITTED), stage=self.stage)
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
        others = Assignment.objects.filter(screen=screen, stage=self.stage).filter(
            live_q(now) | Q(status=AssignmentStatus.SUBMITTED)
        )
        if own is not None:
            others = others.exclude(pk=own.pk)
        if others.filter(annotator=user).exists():
            return False
        return others.count() < screen.project.prefilter_judgments

    def clean(self, *, assignment: Assignment, data: dict[str, Any]) -> dict[str, Any]:
        require_keys(data, {"non_english_app", "vh_out_of_sync", "note"})
        return {
            "non_english_app": clean_bool(data.get("non_english_app"), field="non_english_app"),
            "vh_out_of_sync": clean_bool(data.get("vh_out_of_sync"), field="vh_out_of_sync"),
            "note": clean_text(data.get("note"), field="note", max_length=2000, required=False),
        }

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
        Assignment.objects.filter(screen=screen, stage=self.stage, status=AssignmentStatus.LEASED).exclude(
            pk=assignment.pk
        ).update(status=AssignmentStatus.EXPIRED, updated_at=now)


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

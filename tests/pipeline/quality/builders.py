"""Builders for the annotator-side quality tests: gold pre-filtering items, annotators taken
through a qualification set or paused by control items with the real engine, and a monitoring
rule's pause."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.lock_objects import standing_lock
from annotation.models import GoldItem, Project, QualityEvent, ScreenState, Standing, StandingStatus
from pipeline.engine import assignment_next, assignment_submit, stage_get
from pipeline.quality.standing import pause
from tests.pipeline.stages.helpers import screens

RIGHT = {"non_english_app": False, "vh_out_of_sync": False}
WRONG = {"non_english_app": True, "vh_out_of_sync": False}


def gold_prefilter(project: Project, count: int) -> list[GoldItem]:
    """``count`` gold pre-filtering items (screens already judged: English, in sync)."""
    return [
        GoldItem.objects.create(project=project, stage="prefilter", screen=screen, answer=dict(RIGHT))
        for screen in screens(project, count, state=ScreenState.QUESTIONS_1)
    ]


def work_prefilter(project: Project, user: Any, body: dict[str, Any]) -> Any:
    lease = assignment_next(project=project, user=user, stage="prefilter")
    assert lease is not None
    return assignment_submit(assignment_id=lease.pk, user=user, data=dict(body))


def fail_qualification(project: Project, user: Any) -> None:
    """A two-item qualification set with one wrong answer: not qualified (the project asks 2 items,
    with no second sample)."""
    project.qualification_items, project.qualification_extra_items = 2, 0
    project.save(update_fields=["qualification_items", "qualification_extra_items"])
    first = work_prefilter(project, user, WRONG)
    second = work_prefilter(project, user, RIGHT)
    assert first.purpose == second.purpose == "qualification"
    assert Standing.objects.get(user=user, stage="prefilter").status == StandingStatus.NOT_QUALIFIED


def pause_on_control_items(project: Project, user: Any) -> None:
    """An active annotator whose every lease is a control item answers two wrong: paused. (Real work
    waits too: a control item is served only beside it.)"""
    screens(project, 2, state=ScreenState.PREFILTER)
    project.control_rate_new = 1.0
    project.monitoring_evidence = 3.0  # two wrong in a row (+1.9 each) is past it, one is not
    project.save(update_fields=["control_rate_new", "monitoring_evidence"])
    Standing.objects.create(project=project, user=user, stage="prefilter", status=StandingStatus.ACTIVE)
    for _ in range(2):
        assert work_prefilter(project, user, WRONG).purpose == "control"
    assert Standing.objects.get(user=user, stage="prefilter").status == StandingStatus.PAUSED


def rule_pause(project: Project, user: Any, stage: str) -> QualityEvent:
    """What a monitoring rule does when it fires (``pipeline.quality.standing.pause`` with no actor):
    the annotator is paused and, as the project's ``paused_work`` says, their work withdrawn.
    Returns the pause's event."""
    with transaction.atomic():
        Standing.objects.get_or_create(
            project=project, user=user, stage=stage, defaults={"status": StandingStatus.ACTIVE}
        )
        standing = standing_lock(project_id=project.pk, user_id=user.pk, stage=stage)
        pause(
            stage=stage_get(stage),
            standing=standing,
            project=project,
            rule="control-accuracy",
            reason="2 of your last 5 control items were right",
            figures={"items": 5, "correct": 2},
            now=timezone.now(),
        )
    return QualityEvent.objects.filter(user=user, stage=stage).latest("pk")

"""Through the engine: a qualification set ends with its last item (not when the gold runs out),
and failing control items pause an annotator, which the lead's report then shows."""

from __future__ import annotations

import random

import pytest

from annotation.models import GoldItem, Project, Standing, StandingStatus
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality import gold as gold_module
from pipeline.quality.report import quality_report
from tests.pipeline.stages.helpers import member, screens

from .report_builders import PREFILTER_RIGHT, PREFILTER_WRONG, gold

NON_ENGLISH = {"non_english_app": True, "vh_out_of_sync": False}

pytestmark = pytest.mark.django_db


def test_qualify_on_the_set_then_get_paused_by_control_items(project):
    Project.objects.filter(pk=project.pk).update(
        qualification_items=2, control_rate=0, control_rate_new=0, monitoring_evidence=5.0
    )
    project.refresh_from_db()
    items = [gold(project) for _ in range(6)]
    screens(project, 2)
    annie = member(project, "annie")
    for _ in range(2):
        leased = assignment_next(project=project, user=annie, stage="prefilter")
        assert leased.gold_id in {g.pk for g in items}
        assignment_submit(assignment_id=leased.pk, user=annie, data={**PREFILTER_RIGHT, "note": ""})
    row = quality_report(project=project, user_id=annie.pk)[0]
    assert row.standings[0].status == StandingStatus.ACTIVE  # decided after the 2nd of 2 items
    assert (row.qualification_score, row.standings[0].qualification_items) == (1.0, 2)
    # real work next (control rate 0): four gold items are left unserved
    leased = assignment_next(project=project, user=annie, stage="prefilter")
    assert leased.gold_id is None
    assignment_submit(assignment_id=leased.pk, user=annie, data={**PREFILTER_RIGHT, "note": ""})
    Project.objects.filter(pk=project.pk).update(control_rate=1, control_rate_new=1)
    project.refresh_from_db()
    for _ in range(3):
        leased = assignment_next(project=project, user=annie, stage="prefilter")
        assert leased.purpose == "control"
        assignment_submit(assignment_id=leased.pk, user=annie, data={**PREFILTER_WRONG, "note": ""})
    row = quality_report(project=project, user_id=annie.pk)[0]
    assert row.status == StandingStatus.PAUSED and (row.control_correct, row.control_items) == (0, 3)


def test_a_judge_who_never_flags_fails_a_qualification_set_drawn_from_gold_that_mostly_has_no_flag(
    project, monkeypatch
):
    # given gold that is mostly screens with no flag, the few flagged ones served more often (so the
    # least-served-first pick alone would give a set of no-flag screens only), at the default 90%
    monkeypatch.setattr(gold_module, "gold_random", random.Random(11))
    Project.objects.filter(pk=project.pk).update(qualification_items=10)
    project.refresh_from_db()
    for _ in range(16):
        gold(project)
    for _ in range(4):
        GoldItem.objects.filter(pk=gold(project, answer=NON_ENGLISH).pk).update(exposures=3)
    screens(project, 2)
    judge = member(project, "judge")
    # when a judge who never flags anything does the set
    flagged = 0
    for _ in range(10):
        leased = assignment_next(project=project, user=judge, stage="prefilter")
        flagged += leased.gold.answer["non_english_app"]
        assignment_submit(assignment_id=leased.pk, user=judge, data={**PREFILTER_RIGHT, "note": ""})
    # then the set held flagged screens (each item's class drawn with equal chances) and the judge failed it
    assert flagged >= 2
    standing = Standing.objects.get(user=judge, stage="prefilter")
    assert standing.status == StandingStatus.NOT_QUALIFIED
    assert standing.reason.startswith(f"{10 - flagged} of 10 right")

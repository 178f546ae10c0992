"""Control items are mixed in at the rate, not served back to back until the gold runs out.

The draw is a fresh random number per lease (``pipeline.quality.standing.control_random``: the
system's randomness in the product, a seeded generator in the tests, ``tests/conftest.py``), so
nothing about an annotator, their id or their counts fixes what they get. The runs below are the
seeded generator's, the same on every run whatever ids the database gives; the rate over many
annotators is checked on the draw itself, without the database (and with the system's randomness,
within statistical bounds, in ``test_tells.py``)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Membership, Project, Role, ScreenState, Standing, StandingStatus
from pipeline.engine import stage_get
from pipeline.quality.standing import StandingBrief, plan_next
from tests.factories import MembershipFactory, UserFactory
from tests.pipeline.quality.builders import RIGHT, gold_prefilter, work_prefilter
from tests.pipeline.quality.report_builders import START
from tests.pipeline.stages.helpers import screens

RATE = 0.3
ITEMS = 40
ANNOTATORS = 3


def runs_of_controls(purposes: list[str]) -> int:
    return max(len(run) for run in "".join("c" if p == "control" else "w" for p in purposes).split("w"))


@pytest.mark.django_db
def test_control_items_are_mixed_in_at_the_rate(project):
    # given 40 gold items, screens waiting, three active annotators, a control rate of 30%
    gold_prefilter(project, ITEMS)
    screens(project, ITEMS * ANNOTATORS, state=ScreenState.PREFILTER)
    project.control_rate = project.control_rate_new = RATE
    project.save(update_fields=["control_rate", "control_rate_new"])
    annotators = [UserFactory(username=f"a{n}") for n in range(ANNOTATORS)]
    for a in annotators:
        MembershipFactory(project=project, user=a)
        Standing.objects.create(project=project, user=a, stage="prefilter", status=StandingStatus.ACTIVE)
    total = 0
    for a in annotators:
        # when each does 40 items
        purposes = [work_prefilter(project, a, RIGHT).purpose for _ in range(ITEMS)]
        # then about 30% were control items, spread out (never the whole gold set in a row)
        controls = purposes.count("control")
        assert 4 <= controls <= 20, (a.pk, purposes)
        assert runs_of_controls(purposes) <= 5, (a.pk, purposes)
        standing = Standing.objects.get(user=a, stage="prefilter")
        assert (standing.controls_done, standing.items_done) == (controls, ITEMS - controls)
        total += controls
    # and together they are near the rate
    assert 0.2 <= total / (ITEMS * ANNOTATORS) <= 0.4


def test_the_draw_keeps_the_rate_for_any_annotator():
    # given 1000 annotators, each active and doing 40 items at a control rate of 30%;
    # plan_next with the standing given, as the leasing path calls it, reads no row
    project = Project(control_rate=RATE, control_rate_new=RATE, control_new_items=50)
    stage = stage_get("prefilter")
    membership = Membership(role=Role.ANNOTATOR)
    shares, long_runs = [], 0
    for pk in range(1, 1001):
        user = get_user_model()(pk=pk)
        items = controls = 0
        purposes = []
        for _ in range(ITEMS):
            brief = StandingBrief(StandingStatus.ACTIVE, 0, items, controls)
            plan = plan_next(stage=stage, project=project, user=user, membership=membership, standing=brief, now=START)
            purposes.append(plan.purpose)
            if plan.purpose == "control":
                controls += 1
            else:
                items += 1
        shares.append(controls / ITEMS)
        long_runs += runs_of_controls(purposes) > 5
    # then the share of control items is the rate, and a run of 6 in 40 is as rare as chance makes it
    # (0.3^6 = 0.07% at each of 35 places: about 2.5% of annotators)
    assert abs(sum(shares) / len(shares) - RATE) < 0.01
    assert sum(0.1 <= share <= 0.5 for share in shares) >= 990
    assert long_runs <= 40

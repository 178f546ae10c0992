"""The control draw moves on with every item done: control items are mixed in at the rate, not
served back to back until the gold runs out."""

from __future__ import annotations

import pytest

from annotation.models import ScreenState, Standing, StandingStatus
from tests.pipeline.quality.builders import RIGHT, gold_prefilter, work_prefilter
from tests.pipeline.stages.helpers import member, screens

pytestmark = pytest.mark.django_db


def test_control_items_are_mixed_in_at_the_rate(project):
    # given 40 gold items, 40 screens waiting, an active annotator, a control rate of 30%
    gold_prefilter(project, 40)
    screens(project, 40, state=ScreenState.PREFILTER)
    project.control_rate = project.control_rate_new = 0.3
    project.save(update_fields=["control_rate", "control_rate_new"])
    a = member(project, "a")
    Standing.objects.create(project=project, user=a, stage="prefilter", status=StandingStatus.ACTIVE)
    # when they do 40 items
    purposes = [work_prefilter(project, a, RIGHT).purpose for _ in range(40)]
    # then about 30% were control items, spread out (never the whole gold set in a row)
    controls = purposes.count("control")
    assert 4 <= controls <= 20, purposes
    longest = max(len(run) for run in "".join("c" if p == "control" else "w" for p in purposes).split("w"))
    assert longest <= 5, purposes
    standing = Standing.objects.get(user=a, stage="prefilter")
    assert (standing.controls_done, standing.items_done) == (controls, 40 - controls)

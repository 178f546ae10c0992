"""Through the engine: a qualification set ends with its last item (not when the gold runs out),
and failing control items pause an annotator, which the lead's report then shows."""

from __future__ import annotations

import pytest

from annotation.models import Project, StandingStatus
from pipeline.engine import assignment_next, assignment_submit
from pipeline.quality.report import quality_report
from tests.pipeline.stages.helpers import member, screens

from .report_builders import PREFILTER_RIGHT, PREFILTER_WRONG, gold

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

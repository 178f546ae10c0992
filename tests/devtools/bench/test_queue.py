"""The queue benchmark's QC mode at a tiny size, through the services instead of HTTP: the
QC-on project serves control items to qualified annotators and pauses nobody who answers them
right; the QC-off project has no gold and no rules that would act."""

from __future__ import annotations

import pytest

from annotation.models import Project, Standing
from devtools.bench.bench_queue import QC_GOLD, STAGES, check, populate
from pipeline.engine import assignment_next, assignment_submit

pytestmark = pytest.mark.django_db


def _work_through(slug: str, stage: str) -> None:
    project = Project.objects.get(slug=slug)
    for user in [m.user for m in project.memberships.select_related("user")]:
        for _ in range(100):
            lease = assignment_next(project=project, user=user, stage=stage)
            if lease is None:
                break
            assignment_submit(assignment_id=lease.pk, user=user, data=STAGES[stage]["body"])


def test_qc_on_serves_control_items_and_off_has_none():
    populate("bq-on", 30, 1, "prefilter", "on")
    populate("bq-off", 30, 1, "prefilter", "off")
    on = Project.objects.get(slug="bq-on")
    assert on.gold_items.count() == QC_GOLD and on.fast_response_seconds == 0
    assert list(Standing.objects.filter(project=on).values_list("status", flat=True)) == ["active"]
    off = Project.objects.get(slug="bq-off")
    assert (off.gold_items.count(), off.skips_in_a_row, off.review_rate) == (0, 0, 0)
    for slug in ("bq-on", "bq-off"):
        _work_through(slug, "prefilter")
    with_qc, without = check("bq-on", "prefilter"), check("bq-off", "prefilter")
    assert with_qc["control_items"] > 0 and without["control_items"] == 0
    for figures in (with_qc, without):
        assert (figures["screens"], figures["screens_submitted_once"], figures["paused"]) == (30, 30, 0)
        assert figures["double_leases"] == 0

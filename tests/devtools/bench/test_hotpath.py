"""The hot-path benchmark's set-up at a tiny size, through the services instead of HTTP: the
writers are qualified and work through the queue without being paused or refused, the other
projects' screens are never served, and the check finds every screen submitted once."""

from __future__ import annotations

import pytest

from annotation.models import Project, Screen, Standing
from devtools.bench.bench_hotpath import STAGE, baseline_ref, others, populate
from devtools.bench.bench_queue import check
from pipeline.engine import assignment_next, assignment_submit

pytestmark = pytest.mark.django_db


def test_the_loop_runs_on_qualified_writers_beside_other_projects():
    others(20)
    made = populate("hp-tiny", 12, 2)
    project = Project.objects.get(slug="hp-tiny")
    assert project.fast_response_seconds == 0 and len(made["tokens"]) == 2
    assert set(Standing.objects.filter(project=project).values_list("status", flat=True)) == {"active"}
    assert Screen.objects.exclude(project=project).count() == 40
    served = set()
    for membership in project.memberships.select_related("user"):
        for _ in range(20):
            lease = assignment_next(project=project, user=membership.user, stage=STAGE)
            if lease is None:
                break
            served.add(lease.screen.project_id)
            assignment_submit(assignment_id=lease.pk, user=membership.user, data={"questions": ["What is it?"]})
    figures = check("hp-tiny", STAGE)
    assert served == {project.pk}
    assert (figures["screens_submitted_once"], figures["double_leases"], figures["paused"]) == (12, 0, 0)


def test_the_baseline_is_a_ref_given_or_the_merge_base(monkeypatch):
    monkeypatch.setenv("BENCH_HOTPATH_BASELINE", "abc123")
    assert baseline_ref() == "abc123"
    monkeypatch.delenv("BENCH_HOTPATH_BASELINE")
    assert baseline_ref()

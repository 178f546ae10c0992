"""The scale benchmark at a small size (issue 21): a simulated template cloned to a base size, each lead
page and API timed, then the data multiplied by 10 and timed again. Each page's time at 10x the data
stays within 3x of its time at the base size (a ratio, not an absolute time: this machine is shared; the
project page, the analysis page and the actions page's not-answerable counts read their stored figures,
``pipeline.analytics.stored``), every page's query count does not change, and every page stays under 1 MB."""

from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Assignment, Membership, Project, Screen
from devtools.bench.bench_scale import clone, leases_hand_out, measure_projects, template_build
from pipeline.analytics.stored import snapshot_refresh
from pipeline.quality.figures import quality_figures_refresh

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
# A page that reads rows in proportion to the data is about 10x slower at 10x; at 2.0 the test failed on
# unchanged code (2026-11-29: the actions page 27 -> 57 ms, the project's screens page 54 -> 113 ms, one
# run in three on a machine at load 1-2), so 3.0 keeps the margin above noise and far below 10.
RATIO = 3.0


def analyze() -> None:
    """Statistics, as autovacuum would gather them after a bulk load."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def test_lead_pages_stay_flat_at_ten_times_the_data(settings):
    settings.SCREENQA_STORED_FIGURES_MIN_SCREENS = 1  # the project page reads its stored counts, as at full size
    template = template_build(slug="scale-test-template", screens=12, annotators=4, waiting=4)
    small = Project.objects.create(slug="scale-small", name="1x")
    big = Project.objects.create(slug="scale-big", name="10x")
    clone(project=template, copies=15, groups=15, into=small)  # 60 annotators: every list fills its pages
    clone(project=template, copies=150, groups=150, into=big)  # 10x: 600 annotators, ten times the work
    leases_hand_out(project=small, count=40)
    leases_hand_out(project=big, count=400)
    analyze()
    for project in (small, big):
        quality_figures_refresh(project=project)
        snapshot_refresh(project=project, kind="analysis")
        snapshot_refresh(project=project, kind="progress")
    assert Screen.objects.filter(project=big).count() == 10 * Screen.objects.filter(project=small).count()
    assert Assignment.objects.filter(project=big).count() >= 10 * Assignment.objects.filter(project=small).count()
    assert Membership.objects.filter(project=big).count() > 600 > 60 < Membership.objects.filter(project=small).count()
    # both measured together, their requests interleaved: the machine's load falls on both alike
    base, ten = measure_projects([small, big], repeat=9)

    # the best of the runs: on a shared machine the median of a few runs is noisier than the data's effect
    slow = {
        name: (base[name]["best_ms"], ten[name]["best_ms"])
        for name in base
        if ten[name]["best_ms"] > RATIO * max(base[name]["best_ms"], 5.0)
    }
    assert not slow, f"pages more than {RATIO}x slower at 10x the data (ms before, after): {slow}"
    grew = {n: (base[n]["queries"], ten[n]["queries"]) for n in base if base[n]["queries"] != ten[n]["queries"]}
    assert not grew, f"query counts changed with the data: {grew}"
    assert all(m["bytes"] < 1_000_000 for m in ten.values()), {n: m["bytes"] for n, m in ten.items()}

"""The scale benchmark at a small size (issue 21): a simulated template cloned to a base size, each lead
page and API timed, then the data multiplied by 10 and timed again. Each page's time at 10x the data
stays within 2x of its time at the base size (a ratio, not an absolute time: this machine is shared), its
query count does not change, and it stays under 1 MB."""

from __future__ import annotations

import pytest

from annotation.models import Assignment, Membership, Screen
from devtools.bench.bench_scale import clone, leases_hand_out, measure_all, template_build
from pipeline.quality.figures import quality_figures_refresh

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
RATIO = 2.0


def test_lead_pages_stay_flat_at_ten_times_the_data():
    project = template_build(slug="scale-test", screens=12, annotators=4, waiting=4)
    clone(project=project, copies=15, groups=15)  # 60 annotators: every list already fills its pages
    leases_hand_out(project=project, count=50)
    quality_figures_refresh(project=project)
    screens, assignments = Screen.objects.filter(project=project).count(), Assignment.objects.count()
    base = measure_all(project=project, repeat=7)

    clone(project=project, copies=10, groups=10)  # 10x: 600 annotators, the screens and work ten times
    quality_figures_refresh(project=project)
    assert Screen.objects.filter(project=project).count() == 10 * screens
    assert Assignment.objects.filter(project=project).count() >= 9 * assignments
    assert Membership.objects.filter(project=project).count() > 590
    big = measure_all(project=project, repeat=7)

    slow = {
        name: (base[name]["p50_ms"], big[name]["p50_ms"])
        for name in base
        if big[name]["p50_ms"] > RATIO * max(base[name]["p50_ms"], 5.0)
    }
    assert not slow, f"pages more than {RATIO}x slower at 10x the data (ms before, after): {slow}"
    grew = {
        name: (base[name]["queries"], big[name]["queries"])
        for name in base
        if base[name]["queries"] != big[name]["queries"]
    }
    assert not grew, f"query counts changed with the data: {grew}"
    assert all(m["bytes"] < 1_000_000 for m in big.values()), {n: m["bytes"] for n, m in big.items()}

"""The quality benchmark at a small size: with quality control spammers are stopped and none of
their answers reaches the release; without it they do."""

from __future__ import annotations

import pytest

from devtools.bench.bench_quality import one_run

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
SIZE = {"screens": 48, "annotators": 10, "seed": 0}


def test_spammers_are_stopped_and_absent_from_the_release_with_qc_only():
    plain = one_run(qc=False, **SIZE)
    with_qc = one_run(qc=True, **SIZE)
    # Without QC the two spammers work on and their answers are released
    assert len(plain["spammers"]) == 2
    assert plain["release_answers_by_profile"].get("spammer", 0) > 0
    assert all(s["stopped_by"] is None for per in plain["spammers"].values() for s in per.values())
    # Pass-2 writers flag the rule-breaking questions of careless writers and spammers, never a careful one's
    assert plain["pass2_flags_by_profile"].get("spammer", 0) > 0
    assert plain["pass2_flags_by_profile"].get("careful", 0) == 0
    # With QC every spammer is stopped in every stage with gold they tried, within 30 items ...
    assert len(with_qc["spammers"]) == 2
    for per_stage in with_qc["spammers"].values():
        assert set(per_stage) == {"prefilter", "answers"}
        for stop in per_stage.values():
            assert stop["stopped_by"] in ("qualification-failed", "control-accuracy", "fast-responses")
            assert stop["items"] <= 30
    # ... and the release holds answers, none from a spammer
    assert with_qc["release_answers"] > 0
    assert with_qc["release_answers_by_profile"].get("spammer", 0) == 0
    assert with_qc["lead_gold"]["prefilter"] >= 10 and with_qc["lead_gold"]["answers"] >= 10

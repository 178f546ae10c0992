"""The scripted crowd's and the pre-filtering sections of the suggestion benchmark (devtools/bench/bench_assist.py:
docs/assist.md)."""

from __future__ import annotations

import pytest

from devtools.bench import bench_assist


@pytest.mark.skipif(not bench_assist.SCREENS.is_dir(), reason="needs ../shared/data/rico/screens")
def test_the_stamper_accepts_what_careful_annotators_check():
    figures = bench_assist.crowd(questions_per_screen=1)
    profiles = figures["profiles"]
    asked = figures["ranker_on_crowd_questions"]["questions"]
    assert asked > 0 and all(sum(p[k] for k in ("accepted", "edited", "none")) == asked for p in profiles.values())
    # a suggestion is shown for every question: nothing is answered without one
    assert all(p["none"] == 0 for p in profiles.values())
    # the stamper submits the suggestion; a careful annotator accepts it only where it is their own answer
    assert profiles["stamper"]["accepted_share"] > 0.9
    assert profiles["careful"]["accepted_share"] < profiles["stamper"]["accepted_share"] - 0.5
    ranked = figures["ranker_on_crowd_questions"]
    assert 0 <= ranked["top1"] <= ranked["top3"] <= ranked["measured"] <= ranked["questions"]


@pytest.mark.skipif(not bench_assist.SCREENS.is_dir(), reason="needs ../shared/data/rico/screens")
def test_the_baselines_pre_filtering_suggestion_calls_no_real_english_screen_non_english():
    figures = bench_assist.prefilter()
    assert figures["screens"] == len(list(bench_assist.SCREENS.glob("*.json"))) - figures["unreadable"] > 0
    assert figures["non_english_suggested"] == 0 and figures["false_non_english_rate"] == 0.0
    assert figures["out_of_sync_suggested"] == 0  # 0.5, "cannot tell", suggests no flag

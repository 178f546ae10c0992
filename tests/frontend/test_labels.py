"""frontend/templatetags/labels.py: codes as people read them on the lead's pages."""

from __future__ import annotations

from frontend.templatetags.labels import stage_label, standing_label, third_person


def test_stage_and_standing_labels():
    assert stage_label("questions-1") == "Questions, pass 1"
    assert stage_label("prefilter") == "Pre-filtering"
    assert stage_label("nope") == "nope"
    assert standing_label("not_qualified") == "not qualified"
    assert standing_label("paused") == "paused"


def test_reasons_written_for_the_annotator_read_in_the_third_person_for_a_lead():
    assert third_person("2 of your first 5 accepted") == "2 of their first 5 accepted"
    assert third_person("You are paused; your yoghurt") == "They are paused; their yoghurt"
    assert third_person("qualified with 9 of 10") == "qualified with 9 of 10"

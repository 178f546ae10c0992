"""The adversarial benchmark's own judgment of spam: which spam submissions say what the scripted
truth says (a random judgment is often right, so "spam in the release" counts both)."""

from __future__ import annotations

import pytest

from devtools.adversary import same_as_truth

NO_FLAG = {"non_english_app": False, "vh_out_of_sync": False, "note": ""}
BOX = {"text": "OK", "bounds": [0, 0, 10, 10]}
OTHER = {"text": "Cancel", "bounds": [0, 20, 10, 30]}


@pytest.mark.parametrize(
    ("body", "truth", "same"),
    [
        (NO_FLAG, NO_FLAG, True),
        ({"non_english_app": True, "vh_out_of_sync": False}, NO_FLAG, False),
        ({"non_english_app": False, "vh_out_of_sync": True}, NO_FLAG, False),
        ({"non_english_app": False}, NO_FLAG, True),  # a flag left out is not set
        ({"verdict": "not_answerable", "elements": []}, {"verdict": "not_answerable", "elements": []}, True),
        ({"verdict": "not_answerable", "elements": []}, {"verdict": "answered", "elements": [BOX]}, False),
        ({"verdict": "answered", "elements": [OTHER]}, {"verdict": "answered", "elements": [BOX]}, False),
        ({"verdict": "answered", "elements": [OTHER, BOX]}, {"verdict": "answered", "elements": [BOX, OTHER]}, True),
        ({"verdict": "answered", "elements": [BOX]}, {"verdict": "answered", "elements": [BOX, OTHER]}, False),
    ],
)
def test_spam_is_right_when_it_says_what_the_truth_says(body, truth, same):
    assert same_as_truth(body, truth) is same


@pytest.mark.parametrize(
    ("stage", "qualifying", "decided"),
    [
        ("questions-1", True, "honest"),  # while review decides its qualification
        ("questions-1", False, "spam"),  # once active: nonsense
        ("not-answerable", False, "spam"),
        ("prefilter", False, "honest"),  # not a judge: honest wherever it is not a writer
    ],
)
def test_the_sly_writer_writes_honestly_while_qualifying_then_nonsense(stage, qualifying, decided):
    from devtools.adversary import StageLog, Worker

    worker = Worker(name="sly-writer", kind="sly-writer", user=None, api=None, seed=0)  # type: ignore[arg-type]
    log = StageLog()
    assert worker.decide(stage, log, {"stage": stage}, None, qualifying) == decided
    assert log.turned is (decided == "spam")

"""``example_predictions`` (issue 22 §12): predictions for a release's questions that the scorer reads."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from pipeline.metrics.examples import example_predictions
from pipeline.metrics.scorer import ScoringInputError, scoring_run

ANSWERS = [
    {
        "image_id": 1,
        "question": "What is the title?",
        "ground_truth": [
            {"full_answer": "The title is Chats.", "ui_elements": [{"text": "Chats", "bounds": [1, 2, 30, 40]}]},
            {"full_answer": "Chats.", "ui_elements": [{"text": "Chats", "bounds": [1, 2, 30, 41]}]},
        ],
    },
    {"image_id": 2, "question": "Is it raining?", "ground_truth": [{"full_answer": "", "ui_elements": []}]},
]
SHORT = [
    {"image_id": 1, "question": "What is the title?", "ground_truth": ["Chats"]},
    {"image_id": 2, "question": "Is it raining?", "ground_truth": ["<no answer>"]},
]


@pytest.fixture
def release(tmp_path):
    (tmp_path / "answers.json").write_text(json.dumps(ANSWERS))
    (tmp_path / "short.json").write_text(json.dumps(SHORT))
    return [tmp_path / "answers.json", tmp_path / "short.json"]


def test_first_answer_predictions_score_one_on_every_task(release, tmp_path):
    # when the first-answer baseline is written by the command and scored
    out = io.StringIO()
    call_command("example_predictions", "--gold", *[f"{p}" for p in release[:1]], "--gold", str(release[1]),
                 "--out", str(tmp_path / "preds.json"), "--baseline", "first-answer", stdout=out)  # fmt: skip
    report = scoring_run(gold_paths=release, prediction_path=tmp_path / "preds.json")
    # then every ScreenQA task is reported, each at 1 over the gold
    assert "Wrote 2 predictions (first-answer)" in out.getvalue()
    assert {"sqa_s", "sqa_uic", "sqa_uic_bb", "sqa_l", "answer_matching"} <= set(report.summary)
    for task in ("sqa_s", "sqa_uic", "sqa_uic_bb"):
        assert report.summary[task]["over_gold"]["em"] == 1.0
        assert report.summary[task]["missing"] == 0


def test_the_question_baseline_reads_only_the_question(release):
    predictions = example_predictions(gold_paths=release)
    assert predictions[0] == {
        "image_id": 1,
        "question": "What is the title?",
        "short_answer": "title",
        "full_answer": "What is the title?",
        "ui_elements": [],
    }


def test_leave_out_drops_every_nth_question(release):
    assert [p["image_id"] for p in example_predictions(gold_paths=release, leave_out=2)] == [1]


def test_refuses_what_it_cannot_make_predictions_from(release, tmp_path):
    with pytest.raises(ScoringInputError, match="baseline"):
        example_predictions(gold_paths=release, baseline="oracle")
    docvqa = tmp_path / "docvqa.json"
    docvqa.write_text(json.dumps({"data": [{"questionId": 1, "question": "q", "answers": ["a"]}]}))
    with pytest.raises(ScoringInputError, match="DocVQA"):
        example_predictions(gold_paths=[docvqa])
    with pytest.raises(CommandError, match="does not exist"):
        call_command("example_predictions", "--gold", str(tmp_path / "nope.json"), "--out", str(tmp_path / "p.json"))
    assert not (tmp_path / "p.json").exists()

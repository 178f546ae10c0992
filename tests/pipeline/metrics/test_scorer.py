"""The scorer end to end: gold + prediction files -> the ``score`` command's figures.

The command lives in pipeline/management/commands/score.py; its tests sit with the metrics they
drive. Files are written to tmp_path; the real short-answer files come from the shared data folder.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from pipeline.metrics.scorer import (
    GoldExample,
    Prediction,
    Rater,
    ScoringInputError,
    load_gold,
    load_predictions,
    score_docvqa,
    score_screenqa,
    scoring_run,
)
from pipeline.metrics.uic import Element

REPO = Path(__file__).resolve().parents[3]

# Two real records of FORMATS.md section 2, plus a not-answerable one (empty element list).
AAB = [
    {
        "image_id": 31,
        "image_width": 1080,
        "image_height": 1920,
        "question": "From whom are you protected?",
        "ground_truth": [
            {
                "full_answer": "You are protected from unauthorized transactions.",
                "ui_elements": [
                    {"bounds": [424, 1078, 852, 1117], "text": "unauthorized transactions", "vh_index": -1}
                ],
            },
            {
                "full_answer": "You are protected from unauthorized transactions.",
                "ui_elements": [
                    {"bounds": [426, 1078, 852, 1113], "text": "unauthorized transactions", "vh_index": -1}
                ],
            },
        ],
    },
    {
        "image_id": 37374,
        "image_width": 1080,
        "image_height": 1920,
        "question": "What type of Ford car is selected?",
        "ground_truth": [
            {
                "full_answer": "The type of selected Ford car is the C Max 2014.",
                "ui_elements": [
                    {"text": "C Max", "bounds": [33, 319, 939, 376], "vh_index": 12},
                    {"text": "2014", "bounds": [33, 483, 939, 540], "vh_index": 15},
                ],
            },
            {
                "full_answer": 'The selected type of "Ford" car is "C Max".',
                "ui_elements": [{"text": "C Max", "bounds": [33, 319, 939, 376], "vh_index": 12}],
            },
        ],
    },
    {
        "image_id": 40000,
        "image_width": 540,
        "image_height": 960,
        "question": "What is the phone number?",
        "ground_truth": [{"full_answer": "There is no phone number on the screen.", "ui_elements": []}],
    },
]
SHORT = [
    {"image_id": 31, "question": "From whom are you protected?", "ground_truth": ["unauthorized transactions"]},
    {"image_id": 37374, "question": "What type of Ford car is selected?", "ground_truth": ["C Max 2014", "C Max"]},
    {"image_id": 40000, "question": "What is the phone number?", "ground_truth": ["<no answer>"]},
]


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def gold(tmp_path) -> list[Path]:
    return [write(tmp_path, "aab.json", AAB), write(tmp_path, "short.json", SHORT)]


def complete(n: int, **figures: float) -> dict:
    """A task's summary when every one of its ``n`` gold examples has a prediction: both means equal."""
    return {"over_gold": figures, "over_predicted": figures, "n_gold": n, "n_predicted": n, "missing": 0}


def run_json(gold: list[Path], pred: Path, *extra: str) -> tuple[dict, list[dict]]:
    out = io.StringIO()
    args = [a for g in gold for a in ("--gold", str(g))]
    call_command("score", *args, "--pred", str(pred), "--json", *extra, stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return lines[-1], lines[:-1]


def test_perfect_predictions_score_one_on_every_task(gold, tmp_path):
    # given the first rater's answer as the prediction for every task
    preds = [
        {
            "image_id": item["image_id"],
            "question": item["question"],
            "short_answer": short["ground_truth"][0],
            "full_answer": item["ground_truth"][0]["full_answer"],
            "ui_elements": [{"text": e["text"], "bounds": e["bounds"]} for e in item["ground_truth"][0]["ui_elements"]],
        }
        for item, short in zip(AAB, SHORT, strict=True)
    ]
    # when scored
    summary, _ = run_json(gold, write(tmp_path, "pred.json", preds))
    # then every figure is 1, over the 3 examples, none missing
    assert summary == {
        "sqa_s": complete(3, em=1.0, f1=1.0),
        "sqa_uic": complete(3, em=1.0, f1=1.0),
        "sqa_uic_bb": complete(3, bbox_f1=1.0, em=1.0, f1=1.0),
        "sqa_l": complete(3, rouge1=1.0, rouge2=1.0, rougeL=1.0),
        "answer_matching": complete(3, ndcg_v=1.0, f1=1.0),
        "gold_examples": 3,
        "unmatched": 0,
    }


def test_each_task_only_where_its_field_is_present_missing_scores_zero_unmatched_not_scored(gold, tmp_path):
    # given short answers for two gold questions (one right, one wrong), elements without boxes for one,
    # and one prediction for a question the gold does not have
    preds = [
        {"image_id": 31, "question": "From whom are you protected?", "short_answer": "Unauthorized transactions."},
        {
            "image_id": 37374,
            "question": "What type of Ford car is selected?",
            "short_answer": "Ford",
            "ui_elements": [{"text": "C Max 2014"}],
        },
        {"image_id": 99, "question": "Not in gold?", "short_answer": "x"},
    ]
    summary, rows = run_json(gold, write(tmp_path, "pred.json", preds), "--per-example")
    # then SQA-S averages (1 + 0 + missing 0) over the 3 gold examples, and (1 + 0) over the 2 predicted
    assert summary["sqa_s"] == {
        "over_gold": {"em": pytest.approx(1 / 3), "f1": pytest.approx(1 / 3)},
        "over_predicted": {"em": 0.5, "f1": 0.5},
        "n_gold": 3,
        "n_predicted": 2,
        "missing": 1,
    }
    # SQA-UIC and answer matching are scored, SQA-UIC-BB and SQA-L are absent (no boxes, no full answers)
    assert set(summary) == {"sqa_s", "sqa_uic", "answer_matching", "gold_examples", "unmatched"}
    assert summary["sqa_uic"] == {
        "over_gold": {"em": 0.0, "f1": 0.0},
        "over_predicted": {"em": 0.0, "f1": 0.0},
        "n_gold": 3,
        "n_predicted": 1,
        "missing": 2,
    }
    # answer matching forgives the segmentation: "C Max 2014" holds both of rater 1's items
    assert summary["answer_matching"]["over_gold"] == {"ndcg_v": pytest.approx(1 / 3), "f1": pytest.approx(1 / 3)}
    assert summary["answer_matching"]["over_predicted"] == {"ndcg_v": 1.0, "f1": 1.0}
    assert summary["unmatched"] == 1
    # and --per-example prints one line per gold example and per unmatched prediction
    assert len(rows) == 4
    assert rows[0] == {
        "image_id": 31,
        "question": "From whom are you protected?",
        "sqa_s": {"em": 1.0, "f1": 1.0},
        "missing": ["sqa_uic", "answer_matching"],
    }
    assert rows[2]["missing"] == ["sqa_s", "sqa_uic", "answer_matching"]
    assert rows[3] == {"image_id": 99, "question": "Not in gold?", "unmatched": True}


def test_empty_element_list_and_no_answer(gold, tmp_path):
    # given "nothing" predicted for every question
    preds = [
        {"image_id": s["image_id"], "question": s["question"], "short_answer": "<no answer>", "ui_elements": []}
        for s in SHORT
    ]
    summary, _ = run_json(gold, write(tmp_path, "pred.json", preds))
    # then only the not-answerable question scores, on every task
    for task in ("sqa_s", "sqa_uic", "sqa_uic_bb", "answer_matching"):
        assert summary[task]["n_predicted"] == 3
        for mean in ("over_gold", "over_predicted"):
            for metric, value in summary[task][mean].items():
                assert value == pytest.approx(1 / 3), (task, mean, metric)


def test_gold_of_one_kind_limits_the_tasks(tmp_path):
    # given only the short-answer gold, a prediction with elements scores SQA-S only
    gold = [write(tmp_path, "short.json", SHORT)]
    preds = [{"image_id": 31, "question": "From whom are you protected?", "short_answer": "x", "ui_elements": []}]
    summary, _ = run_json(gold, write(tmp_path, "pred.json", preds))
    assert set(summary) == {"sqa_s", "gold_examples", "unmatched"}


def test_text_output(gold, tmp_path):
    preds = [{"image_id": 31, "question": "From whom are you protected?", "short_answer": "unauthorized transactions"}]
    out = io.StringIO()
    call_command(
        "score", "--gold", str(gold[0]), "--gold", str(gold[1]), "--pred", str(write(tmp_path, "p.json", preds)),
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "SQA-S            over gold (missing = 0)  em 0.3333  f1 0.3333  n 3 (missing 2)" in text
    assert "                 over predicted           em 1.0000  f1 1.0000  n 1" in text
    assert "gold examples 3, unmatched predictions 0" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ("[1]", "item 0: must be an object"),
        ('[{"image_id": "31", "question": "q"}]', "'image_id' must be an integer"),
        ('[{"image_id": true, "question": "q"}]', "'image_id' must be an integer"),
        ('[{"image_id": 31}]', "'question' must be a string"),
        ('[{"image_id": 31, "question": "q", "short_answer": 3}]', "'short_answer' must be a string"),
        ('[{"image_id": 31, "question": "q", "ui_elements": "x"}]', "ui_elements must be a list"),
        ('[{"image_id": 31, "question": "q", "ui_elements": [{"bounds": [1,2,3,4]}]}]', "a string 'text'"),
        ('[{"image_id": 31, "question": "q", "ui_elements": [{"text": "a", "bounds": [1,2]}]}]', "4 numbers"),
        ('[{"image_id": 31, "question": "q"}, {"image_id": 31, "question": "q"}]', "item 1: second prediction"),
    ],
)
def test_malformed_predictions_are_clear_errors(gold, tmp_path, content, message):
    pred = write(tmp_path, "bad.json", content)
    with pytest.raises(ScoringInputError, match=message) as info:
        scoring_run(gold_paths=gold, prediction_path=pred)
    assert str(pred) in info.value.message
    with pytest.raises(CommandError, match=message) as command_info:
        call_command("score", "--gold", str(gold[0]), "--pred", str(pred))
    assert command_info.value.returncode == 2


def test_malformed_gold_is_a_clear_error(tmp_path):
    pred = write(tmp_path, "p.json", [])
    cases = [
        ([{"image_id": 1, "question": "q", "ground_truth": "x"}], "'ground_truth' must be a list"),
        ([{"image_id": 1, "question": "q", "ground_truth": ["a", {"x": 1}]}], "only strings or only objects"),
        ([{"image_id": 1, "question": "q", "ground_truth": []}] * 2, "duplicate"),
        ({"data": [{"questionId": 1, "answers": "x"}]}, "'answers' must be a list of strings"),
    ]
    for data, message in cases:
        with pytest.raises(ScoringInputError, match=message):
            scoring_run(gold_paths=[write(tmp_path, "g.json", data)], prediction_path=pred)
    with pytest.raises(ScoringInputError, match="two gold files"):
        scoring_run(
            gold_paths=[write(tmp_path, "a.json", SHORT), write(tmp_path, "b.json", SHORT)], prediction_path=pred
        )
    with pytest.raises(ScoringInputError, match="does not exist"):
        scoring_run(gold_paths=[tmp_path / "nope.json"], prediction_path=pred)


def test_command_exit_code_two_and_no_traceback(gold, tmp_path):
    # given a prediction file that is not JSON, run as a user would
    pred = write(tmp_path, "bad.json", "[{")
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "annotation.settings.test"}
    result = subprocess.run(
        [sys.executable, "manage.py", "score", "--gold", str(gold[1]), "--pred", str(pred)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "is not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_docvqa_anls(tmp_path):
    gold = write(
        tmp_path,
        "docvqa.json",
        {
            "dataset_name": "ScreenQA",
            "dataset_split": "val",
            "dataset_version": "1.0",
            "data": [
                {"questionId": 8399, "question": "q1", "image": "a.png", "answers": ["TRANSMIT CONFIRMATION REPORT"]},
                {"questionId": 18601, "question": "q2", "image": "b.png", "answers": ["12/15/88"]},
                {"questionId": 2562, "question": "q3", "image": "c.png", "answers": ["13.1"]},
            ],
        },
    )
    preds = [
        {"questionId": 8399, "answer": "transmit confirmation report"},
        {"questionId": 18601, "answer": "12/15/89"},
        {"questionId": 77, "answer": "x"},
    ]
    summary, rows = run_json([gold], write(tmp_path, "p.json", preds), "--per-example")
    assert summary == {
        "anls": {
            "over_gold": {"anls": pytest.approx((1 + 7 / 8 + 0) / 3)},
            "over_predicted": {"anls": pytest.approx((1 + 7 / 8) / 2)},
            "n_gold": 3,
            "n_predicted": 2,
            "missing": 1,
        },
        "gold_examples": 3,
        "unmatched": 1,
    }
    assert rows[1] == {"questionId": 18601, "anls": {"anls": 0.875}}
    assert rows[2] == {"questionId": 2562, "missing": ["anls"]}
    assert rows[3:] == [{"questionId": 77, "unmatched": True}]


def test_docvqa_rows_only_when_asked():
    report = score_docvqa({1: ["a"]}, {1: "a", 2: "b"})
    assert report.examples == []
    assert report.summary["unmatched"] == 1


DOCVQA_GOLD = {"dataset_name": "ScreenQA", "data": [{"questionId": 1, "answers": ["a"]}]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"data": {"questionId": 1}}, "gold file {gold}: 'data' must be a list"),
        ({"data": [1]}, "gold file {gold}, data[0]: must be an object with a 'questionId'"),
        ({"data": [{"answers": ["a"]}]}, "gold file {gold}, data[0]: must be an object with a 'questionId'"),
        (
            {"data": [{"questionId": 1, "answers": [1]}]},
            "gold file {gold}, data[0]: 'answers' must be a list of strings",
        ),
        (
            {"data": [{"questionId": 1, "answers": []}, {"questionId": 1, "answers": []}]},
            "gold file {gold}, data[1]: duplicate questionId 1",
        ),
    ],
)
def test_malformed_docvqa_gold_is_a_clear_error(tmp_path, data, message):
    gold = write(tmp_path, "g.json", data)
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=[gold], prediction_path=write(tmp_path, "p.json", []))
    assert info.value.message == message.format(gold=gold)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"questionId": 1}, "prediction file {pred}: expected a JSON list of objects"),
        ([1], "prediction file {pred}, item 0: must be an object with a 'questionId'"),
        ([{"answer": "a"}], "prediction file {pred}, item 0: must be an object with a 'questionId'"),
        ([{"questionId": 1, "answer": 2}], "prediction file {pred}, item 0: 'answer' must be a string"),
        (
            [{"questionId": 1, "answer": "a"}, {"questionId": 1, "answer": "b"}],
            "prediction file {pred}, item 1: second prediction for questionId 1",
        ),
    ],
)
def test_malformed_docvqa_predictions_are_clear_errors(tmp_path, data, message):
    pred = write(tmp_path, "p.json", data)
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=[write(tmp_path, "g.json", DOCVQA_GOLD)], prediction_path=pred)
    assert info.value.message == message.format(pred=pred)


def test_a_missing_docvqa_prediction_file_says_so(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=[write(tmp_path, "g.json", DOCVQA_GOLD)], prediction_path=missing)
    assert info.value.message == f"prediction file {missing} does not exist"


@pytest.mark.parametrize("bounds", [[1, 2, 3, True], [1.0, 2, 3, "4"]])
def test_bounds_are_numbers_not_booleans(gold, tmp_path, bounds):
    preds = [{"image_id": 31, "question": "q", "ui_elements": [{"text": "a", "bounds": bounds}]}]
    pred = write(tmp_path, "p.json", preds)
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=gold, prediction_path=pred)
    message = (
        f"prediction file {pred}, item 0, ui_elements[0]: bounds must be a list of 4 numbers [left, top, right, bottom]"
    )
    assert info.value.message == message


@pytest.mark.realdata
@pytest.mark.parametrize("split", ["validation", "test"])
def test_real_short_answers_perfect_prediction_scores_one(shared_data, tmp_path, split):
    # given the real release file and, as prediction, the first ground truth of every question
    gold = shared_data / "screen_qa" / "short_answers" / f"{split}.json"
    records = json.loads(gold.read_text())
    preds = [
        {"image_id": r["image_id"], "question": r["question"], "short_answer": r["ground_truth"][0]} for r in records
    ]
    # when scored
    summary, _ = run_json([gold], write(tmp_path, "pred.json", preds))
    # then EM and F1 are 1.0 over every question, and "<no answer>" only where a rater gave it
    assert summary["sqa_s"] == complete(len(records), em=1.0, f1=1.0)
    assert summary["unmatched"] == 0
    # and predicting "<no answer>" everywhere scores exactly the share of questions that allow it
    nothing = [{**p, "short_answer": "<no answer>"} for p in preds]
    summary, _ = run_json([gold], write(tmp_path, "nothing.json", nothing))
    allowed = sum("<no answer>" in r["ground_truth"] for r in records)
    assert summary["sqa_s"]["over_gold"]["em"] == pytest.approx(allowed / len(records))


def test_scorer_benchmark_runs_at_ci_size():
    # the benchmark (devtools/bench/bench_scorer.py) reports a rate for every task; no timing asserted here
    from devtools.bench.bench_scorer import TASK_FIELDS, run

    figures = run(full=False)
    assert figures["examples"] == 4000
    for task in TASK_FIELDS:
        assert figures[task]["examples_per_s"] > 0
    assert 0 < figures["sqa_s"]["f1"] < 1  # the predictions are deliberately imperfect
    assert 0 < figures["sqa_uic_bb"]["f1"] < 1
    json.dumps(figures)


def test_gold_example_without_any_ground_truth_scores_zero_as_in_the_release_code(tmp_path):
    # given a short-answer file with one question that has no acceptable answer at all (our exporter
    # writes such a question when it has no short answers), predicted by the only prediction
    gold = [write(tmp_path, "g.json", [*SHORT, {"image_id": 5, "question": "Empty?", "ground_truth": []}])]
    preds = [{"image_id": 5, "question": "Empty?", "short_answer": "x"}]
    summary, rows = run_json(gold, write(tmp_path, "p.json", preds), "--per-example")
    # then it is scored as the release's sqa_s_metrics(prediction, []) scores it: 0
    assert summary["gold_examples"] == 4
    assert rows[3] == {"image_id": 5, "question": "Empty?", "sqa_s": {"em": 0.0, "f1": 0.0}}
    assert summary["sqa_s"] == {
        "over_gold": {"em": 0.0, "f1": 0.0},
        "over_predicted": {"em": 0.0, "f1": 0.0},
        "n_gold": 4,
        "n_predicted": 1,
        "missing": 3,
    }


def test_empty_rater_list_in_a_file_of_raters_scores_zero(tmp_path):
    gold = [write(tmp_path, "g.json", [*AAB, {"image_id": 5, "question": "Empty?", "ground_truth": []}])]
    preds = [{"image_id": 5, "question": "Empty?", "ui_elements": []}]
    _, rows = run_json(gold, write(tmp_path, "p.json", preds), "--per-example")
    assert rows[3]["sqa_uic"] == {"em": 0.0, "f1": 0.0}
    assert rows[3]["sqa_uic_bb"] == {"bbox_f1": 0.0, "em": 0.0, "f1": 0.0}


def test_empty_ground_truth_in_a_file_of_no_single_kind_is_not_scored(tmp_path):
    gold = [write(tmp_path, "g.json", [{"image_id": 5, "question": "Empty?", "ground_truth": []}])]
    preds = [{"image_id": 5, "question": "Empty?", "short_answer": "x"}]
    summary, _ = run_json(gold, write(tmp_path, "p.json", preds))
    assert summary == {"gold_examples": 1, "unmatched": 0}


def test_each_task_is_scored_alone_when_only_it_is_asked(gold):
    # given predictions with elements (with boxes) for two examples, none for the third
    _kind, golds = load_gold(gold)
    preds = {
        (31, "From whom are you protected?"): Prediction(
            31, "From whom are you protected?", "unauthorized transactions", None,
            (Element("unauthorized transactions", (424, 1078, 852, 1117)),),
        ),
        (37374, "What type of Ford car is selected?"): Prediction(
            37374, "What type of Ford car is selected?", None, None, (Element("C Max", None),)
        ),
    }  # fmt: skip
    # when one task is asked, then only it is scored
    for task in ("sqa_uic", "answer_matching", "sqa_uic_bb", "sqa_s"):
        summary = score_screenqa(golds, preds, only={task}).summary
        assert set(summary) == {task, "gold_examples", "unmatched"}, task
    # and the example without boxes, like the one without a prediction, is missing for SQA-UIC-BB
    rows = score_screenqa(golds, preds, per_example=True, only={"sqa_uic_bb"}).examples
    assert [row.get("missing") for row in rows] == [None, ["sqa_uic_bb"], ["sqa_uic_bb"]]


def json_error(text: str) -> str:
    """What Python's JSON reader says about ``text`` (the part of the message the scorer passes on)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return str(exc)
    raise AssertionError(f"{text!r} is valid JSON")


RATER_GOLD = [{"image_id": 1, "question": "q", "ground_truth": [{"full_answer": "a", "ui_elements": []}]}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"a": 1}, "gold file {gold}: expected a JSON list (ScreenQA release) or an object with 'data' (DocVQA)"),
        (["data"], "gold file {gold}, item 0: must be an object"),
        (
            [{"image_id": "1", "question": "q", "ground_truth": []}],
            "gold file {gold}, item 0: 'image_id' must be an integer",
        ),
        ([{"image_id": 1, "ground_truth": []}], "gold file {gold}, item 0: 'question' must be a string"),
        (
            [
                {"image_id": 1, "question": "q", "ground_truth": []},
                {"image_id": 1, "question": "q", "ground_truth": []},
            ],
            "gold file {gold}, item 1: duplicate (image_id, question) (1, 'q') in one file",
        ),
        (
            [{"image_id": 1, "question": "q", "ground_truth": "x"}],
            "gold file {gold}, item 0: 'ground_truth' must be a list",
        ),
        (
            [{"image_id": 1, "question": "q", "ground_truth": ["a", {"x": 1}]}],
            "gold file {gold}, item 0: 'ground_truth' must hold only strings or only objects",
        ),
        (
            [{"image_id": 1, "question": "q", "ground_truth": [{"full_answer": 3}]}],
            "gold file {gold}, item 0, ground_truth[0]: 'full_answer' must be a string",
        ),
        (
            [{"image_id": 1, "question": "q", "ground_truth": [{"full_answer": "a", "ui_elements": "x"}]}],
            "gold file {gold}, item 0, ground_truth[0]: ui_elements must be a list",
        ),
        (
            [{"image_id": 1, "question": "q", "ground_truth": [{"ui_elements": [{"text": "a", "bounds": [1, 2]}]}]}],
            "gold file {gold}, item 0, ground_truth[0], ui_elements[0]: "
            "bounds must be a list of 4 numbers [left, top, right, bottom]",
        ),
    ],
)
def test_malformed_screenqa_gold_error_names_the_file_the_item_and_the_problem(tmp_path, data, message):
    gold = write(tmp_path, "g.json", data)
    with pytest.raises(ScoringInputError) as info:
        load_gold([gold])
    assert info.value.message == message.format(gold=gold)


def test_unreadable_gold_errors_name_the_gold_file(tmp_path):
    # a file that does not exist, one that is not JSON, one that is not UTF-8 text, and a folder
    missing = tmp_path / "nope.json"
    not_json = write(tmp_path, "bad.json", "{not json")
    not_utf8 = tmp_path / "latin1.json"
    not_utf8.write_bytes(b'["\xe9"]')
    folder = tmp_path / "folder.json"
    folder.mkdir()
    decode_error = UnicodeDecodeError("utf-8", b'["\xe9"]', 2, 3, "invalid continuation byte")
    cases = [
        (missing, f"gold file {missing} does not exist"),
        (not_json, f"gold file {not_json} is not valid JSON: {json_error('{not json')}"),
        (not_utf8, f"gold file {not_utf8} cannot be read: {decode_error}"),
        (folder, f"gold file {folder} cannot be read: [Errno 21] Is a directory: '{folder}'"),
    ]
    for path, message in cases:
        with pytest.raises(ScoringInputError) as info:
            load_gold([path])
        assert info.value.message == message


def test_the_same_question_answered_in_two_gold_files_of_one_kind_is_an_error(tmp_path):
    first, second = write(tmp_path, "a.json", SHORT), write(tmp_path, "b.json", SHORT)
    with pytest.raises(ScoringInputError) as info:
        load_gold([first, second])
    assert (
        info.value.message
        == f"gold file {second}, item 0: (31, 'From whom are you protected?') has short answers in two gold files"
    )
    first, second = write(tmp_path, "c.json", AAB), write(tmp_path, "d.json", AAB)
    with pytest.raises(ScoringInputError) as info:
        load_gold([first, second])
    assert (
        info.value.message
        == f"gold file {second}, item 0: (31, 'From whom are you protected?') has rater answers in two gold files"
    )


def test_no_gold_file_is_an_error():
    with pytest.raises(ScoringInputError) as info:
        load_gold([])
    assert info.value.message == "at least one gold file is needed"


@pytest.mark.parametrize("order", ["docvqa first", "docvqa last", "two docvqa"])
def test_a_docvqa_gold_file_among_several_is_an_error(tmp_path, order):
    docvqa = write(tmp_path, "docvqa.json", DOCVQA_GOLD)
    other = write(tmp_path, "other.json", DOCVQA_GOLD if order == "two docvqa" else SHORT)
    paths = [other, docvqa] if order == "docvqa last" else [docvqa, other]
    with pytest.raises(ScoringInputError) as info:
        load_gold(paths)
    assert info.value.message == "a DocVQA gold file must be the only --gold file"


def test_gold_files_load_into_examples_keyed_and_named_by_image_and_question(tmp_path):
    # given one short-answer file and one file of raters (one without a full answer, one without elements,
    # one element without bounds)
    raters = [
        {
            "image_id": 31,
            "question": "From whom?",
            "ground_truth": [
                {"full_answer": "From fraud.", "ui_elements": [{"text": "fraud", "bounds": [1, 2.5, 3, 4]}]},
                {"ui_elements": [{"text": "fraud"}]},
                {"full_answer": "Fraud."},
            ],
        }
    ]
    short = [{"image_id": 31, "question": "From whom?", "ground_truth": ["fraud"]}]
    paths = [write(tmp_path, "aab.json", raters), write(tmp_path, "short.json", short)]
    # when loaded, then both are merged into one example that names its image and question
    assert load_gold(paths) == (
        "screenqa",
        {
            (31, "From whom?"): GoldExample(
                image_id=31,
                question="From whom?",
                short_answers=["fraud"],
                raters=[
                    Rater("From fraud.", (Element("fraud", (1, 2.5, 3, 4)),)),
                    Rater("", (Element("fraud"),)),
                    Rater("Fraud.", ()),
                ],
            )
        },
    )
    # and a DocVQA file loads as the answers of each question id
    assert load_gold([write(tmp_path, "docvqa.json", DOCVQA_GOLD)]) == ("docvqa", {1: ["a"]})


def test_predictions_load_keyed_and_named_by_image_and_question(tmp_path):
    preds = [
        {"image_id": 31, "question": "From whom?", "short_answer": "fraud", "full_answer": None},
        {
            "image_id": 37374,
            "question": "Which car?",
            "full_answer": "The C Max.",
            "ui_elements": [{"text": "C Max", "bounds": [33, 319, 939, 376.5]}, {"text": "2014", "bounds": None}],
        },
        {"image_id": 40000, "question": "Phone?", "short_answer": None, "ui_elements": None},
    ]
    assert load_predictions(write(tmp_path, "p.json", preds)) == {
        (31, "From whom?"): Prediction(31, "From whom?", "fraud", None, None),
        (37374, "Which car?"): Prediction(
            37374, "Which car?", None, "The C Max.", (Element("C Max", (33, 319, 939, 376.5)), Element("2014"))
        ),
        (40000, "Phone?"): Prediction(40000, "Phone?", None, None, None),
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": 1}', "prediction file {pred}: expected a JSON list of objects"),
        ("[1]", "prediction file {pred}, item 0: must be an object"),
        ('[{"image_id": "31", "question": "q"}]', "prediction file {pred}, item 0: 'image_id' must be an integer"),
        ('[{"image_id": 31}]', "prediction file {pred}, item 0: 'question' must be a string"),
        (
            '[{"image_id": 31, "question": "q"}, {"image_id": 31, "question": "q"}]',
            "prediction file {pred}, item 1: second prediction for (31, 'q')",
        ),
        (
            '[{"image_id": 31, "question": "q", "short_answer": 3}]',
            "prediction file {pred}, item 0: 'short_answer' must be a string",
        ),
        (
            '[{"image_id": 31, "question": "q", "full_answer": []}]',
            "prediction file {pred}, item 0: 'full_answer' must be a string",
        ),
        (
            '[{"image_id": 31, "question": "q", "ui_elements": "x"}]',
            "prediction file {pred}, item 0: ui_elements must be a list",
        ),
        (
            '[{"image_id": 31, "question": "q", "ui_elements": [{"text": 1}]}]',
            "prediction file {pred}, item 0, ui_elements[0]: must be an object with a string 'text'",
        ),
        (
            '[{"image_id": 31, "question": "q", "ui_elements": [{"text": "a", "bounds": [1, 2, NaN, 4]}]}]',
            "prediction file {pred}, item 0, ui_elements[0]: bounds must be finite numbers",
        ),
        ("{not json", "prediction file {pred} is not valid JSON: " + json_error("{not json")),
    ],
)
def test_malformed_screenqa_predictions_error_names_the_file_the_item_and_the_problem(gold, tmp_path, content, message):
    pred = write(tmp_path, "p.json", content)
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=gold, prediction_path=pred)
    assert info.value.message == message.format(pred=pred)


def test_a_missing_screenqa_prediction_file_says_so(gold, tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ScoringInputError) as info:
        scoring_run(gold_paths=gold, prediction_path=missing)
    assert info.value.message == f"prediction file {missing} does not exist"


def test_a_task_whose_predictions_all_miss_the_gold_has_no_mean_over_the_predicted(gold, tmp_path):
    # given short answers for questions the gold does not have only: SQA-S is reported, nothing scored
    preds = [{"image_id": 99, "question": "Not in gold?", "short_answer": "x"}]
    report = scoring_run(gold_paths=gold, prediction_path=write(tmp_path, "p.json", preds))
    # then its mean over the gold is 0 and there is no mean over the predicted
    assert report.summary == {
        "sqa_s": {
            "over_gold": {"em": 0.0, "f1": 0.0},
            "over_predicted": {"em": None, "f1": None},
            "n_gold": 3,
            "n_predicted": 0,
            "missing": 3,
        },
        "gold_examples": 3,
        "unmatched": 1,
    }
    # and no per-example rows unless asked
    assert report.examples == []


def test_only_a_task_the_predictions_do_not_report_scores_nothing(gold):
    # given short answers only (no full answers, so no SQA-L)
    _kind, golds = load_gold(gold)
    preds = {(31, "From whom are you protected?"): Prediction(31, "From whom are you protected?", "x", None, None)}
    # when SQA-L alone is asked, then nothing is scored; asked with SQA-S, SQA-S alone is
    assert score_screenqa(golds, preds, only={"sqa_l"}).summary == {"gold_examples": 3, "unmatched": 0}
    report = score_screenqa(golds, preds, only={"sqa_l", "sqa_s"})
    assert set(report.summary) == {"sqa_s", "gold_examples", "unmatched"}
    # and no per-example rows unless asked
    assert report.examples == []


def test_full_answers_alone_report_sqa_l_alone_with_the_unpredicted_examples_missing(gold, tmp_path):
    # given a full answer for one of the three gold questions, and no other field
    preds = [{"image_id": 31, "question": AAB[0]["question"], "full_answer": AAB[0]["ground_truth"][0]["full_answer"]}]
    report = scoring_run(gold_paths=gold, prediction_path=write(tmp_path, "p.json", preds), per_example=True)
    # then SQA-L is the only task reported (the gold's short answers and elements take no part)
    assert report.summary == {
        "sqa_l": {
            "over_gold": {
                "rouge1": pytest.approx(1 / 3),
                "rouge2": pytest.approx(1 / 3),
                "rougeL": pytest.approx(1 / 3),
            },
            "over_predicted": {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0},
            "n_gold": 3,
            "n_predicted": 1,
            "missing": 2,
        },
        "gold_examples": 3,
        "unmatched": 0,
    }
    # and the two examples without a prediction are missing for SQA-L only
    assert report.examples[1:] == [
        {"image_id": 37374, "question": AAB[1]["question"], "missing": ["sqa_l"]},
        {"image_id": 40000, "question": AAB[2]["question"], "missing": ["sqa_l"]},
    ]

"""The whole pipeline, end to end, through the real services on PostgreSQL:

generated screens → scripted crowd (pre-filter, two question passes, not-answerable sample, answers)
→ post-processing and short answers → release in the public format → the scorer.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Question, QuestionState
from devtools.crowd import crowd_simulate
from pipeline.jobs.runner import job_run_now
from pipeline.release.export.service import release_export
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def score(*args: str) -> dict:
    out = io.StringIO()
    call_command("score", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_from_screens_to_a_scored_release(tmp_path):
    # given a project whose screens a scripted crowd takes through every stage
    project = ProjectFactory(slug="e2e")
    summary = crowd_simulate(project=project, annotators=6, seed=7, new_screens=24)
    assert summary["progress"]["ready_for_postprocessing"] is True
    answered = Question.objects.filter(screen__project=project, state=QuestionState.ANSWERED).count()
    assert answered > 0
    assert not Question.objects.filter(screen__project=project, state=QuestionState.ANSWERING).exists()

    # when a lead post-processes, generates short answers and exports the release
    post = job_run_now(kind="postprocess", project_slug="e2e")
    short = job_run_now(kind="short-answers", project_slug="e2e")
    assert (post.status, short.status) == ("done", "done")
    manifest = release_export(project=project, out_dir=tmp_path)

    # then the release has the public layout, and every kept question is in it exactly once
    kept = Question.objects.filter(screen__project=project, state=QuestionState.KEPT).count()
    assert kept > 0
    records = []
    for split in ("train", "validation", "test"):
        boxes = json.loads((tmp_path / "answers_and_bboxes" / f"{split}.json").read_text())
        shorts = json.loads((tmp_path / "short_answers" / f"{split}.json").read_text())
        assert [(r["image_id"], r["question"]) for r in boxes] == [(r["image_id"], r["question"]) for r in shorts]
        assert [r["image_id"] for r in boxes] == sorted(r["image_id"] for r in boxes)
        for record in boxes:
            assert set(record) == {"image_id", "image_width", "image_height", "question", "ground_truth"}
            for truth in record["ground_truth"]:
                assert set(truth) == {"full_answer", "ui_elements"}
                for element in truth["ui_elements"]:
                    assert set(element) == {"text", "bounds", "vh_index"}
                    left, top, right, bottom = element["bounds"]
                    assert 0 <= left < right <= record["image_width"]
                    assert 0 <= top < bottom <= record["image_height"]
        records += boxes
    assert len(records) == kept
    assert manifest["files"]

    # and a model that predicts the first rater's answers scores 1.0 against it
    shorts = []
    for split in ("train", "validation", "test"):
        shorts += json.loads((tmp_path / "short_answers" / f"{split}.json").read_text())
    by_key = {(r["image_id"], r["question"]): r for r in records}
    predictions = [
        {
            "image_id": s["image_id"],
            "question": s["question"],
            "short_answer": s["ground_truth"][0],
            "ui_elements": by_key[(s["image_id"], s["question"])]["ground_truth"][0]["ui_elements"],
            "full_answer": by_key[(s["image_id"], s["question"])]["ground_truth"][0]["full_answer"],
        }
        for s in shorts
    ]
    pred_file = tmp_path / "predictions.json"
    pred_file.write_text(json.dumps(predictions))
    golds = [str(p) for p in sorted(tmp_path.glob("*/*.json"))]
    result = score(*[arg for g in golds for arg in ("--gold", g)], "--pred", str(pred_file))
    # (every example is predicted: the mean over the gold is the mean over the predicted)
    assert result["sqa_s"]["missing"] == 0
    assert result["sqa_s"]["over_gold"]["em"] == pytest.approx(1.0)
    assert result["sqa_uic"]["over_gold"]["em"] == pytest.approx(1.0)
    assert result["sqa_uic_bb"]["over_gold"]["bbox_f1"] == pytest.approx(1.0)
    assert result["answer_matching"]["over_gold"]["ndcg_v"] == pytest.approx(1.0)

"""The adapter to Label Studio's ML-backend protocol (pipeline/assist/label_studio.py, docs/assist.md): the
product's request as a ``/predict`` body, the predictions (boxes in percent, per-region texts, choices,
texts) as the product's reply, and a project whose backend speaks it, end to end against a local fake."""

from __future__ import annotations

import pytest

from annotation.models import AssistProtocol, AssistUse, ScreenState, Suggestion, SuggestionStatus
from pipeline.assist.client import AssistError, Backend, backend_call
from pipeline.assist.contract import ContractError, suggest_request, suggest_response
from pipeline.assist.label_studio import LABEL_CONFIG, predict_reply, predict_request
from pipeline.engine import assignment_next, assignment_payload, assignment_submit
from tests.pipeline.assist.servers import scripted
from tests.pipeline.assist.test_assist import SCREEN, _run_job, _with_backend
from tests.pipeline.stages.helpers import answering_question, member, screens

# SCREEN is 1080 x 1920: candidate 4 is [220, 10, 400, 60], candidate 7 [10, 900, 1000, 1000]


def _region(x, y, w, h, *, score=None, region_id=None):
    item = {
        "type": "rectanglelabels",
        "from_name": "element",
        "to_name": "screen",
        "original_width": 1080,
        "original_height": 1920,
        "value": {"x": x, "y": y, "width": w, "height": h, "rectanglelabels": ["answer"]},
    }
    if score is not None:
        item["score"] = score
    if region_id is not None:
        item["id"] = region_id
    return item


def _percent(bounds):
    left, top, right, bottom = bounds
    return 100 * left / 1080, 100 * top / 1920, 100 * (right - left) / 1080, 100 * (bottom - top) / 1920


def test_the_request_is_one_task_with_the_screen_the_question_and_the_label_config():
    body = suggest_request(stage="answers", project="demo", screen=SCREEN, question={"id": 981, "text": "Price?"})
    request = predict_request(body)
    (task,) = request["tasks"]
    assert task["id"] == 981
    assert task["data"]["question"] == "Price?" and task["data"]["stage"] == "answers"
    assert task["data"]["candidates"] == body["screen"]["candidates"]
    assert (task["data"]["width"], task["data"]["height"]) == (1080, 1920)
    assert request["label_config"] == LABEL_CONFIG and "<RectangleLabels" in LABEL_CONFIG
    assert request["project"] == "demo"
    # pre-filtering has no question: the task is the screen's
    prefilter = predict_request(suggest_request(stage="prefilter", project="demo", screen=SCREEN))
    assert prefilter["tasks"][0]["id"] == 1 and prefilter["tasks"][0]["data"]["question"] == ""


def test_boxes_in_percent_become_candidates_or_drawn_boxes_with_their_region_text():
    reply = {
        "results": [
            {
                "model_version": "ocr-detector-3",
                "score": 0.7,
                "result": [
                    _region(*_percent([222, 12, 398, 58]), score=0.9),  # candidate 4, a pixel or two off
                    _region(*_percent([500, 500, 700, 560]), region_id="r2"),  # no candidate there: a drawn box
                    {"id": "r2", "type": "textarea", "from_name": "element_text", "value": {"text": ["Tax incl."]}},
                    _region(*_percent([600, 600, 800, 660]), score=0.99),  # neither a candidate nor a text: left out
                    _region(120.0, 10.0, 5.0, 5.0, score=0.95),  # off the image
                ],
            }
        ]
    }
    checked = suggest_response(predict_reply(reply, stage="answers", screen=SCREEN), stage="answers", screen=SCREEN)
    assert checked["model_version"] == "ocr-detector-3"
    assert checked["elements"] == [
        {"vh_index": 4, "bounds": [220, 10, 400, 60], "text": "$3.99", "score": 0.9},
        {"vh_index": None, "bounds": [500, 500, 700, 560], "text": "Tax incl.", "score": 0.7},  # the prediction's
    ]
    # label-studio-ml's older answer: a bare list of predictions
    bare = predict_reply(reply["results"], stage="answers", screen=SCREEN)
    assert bare["elements"] == predict_reply(reply, stage="answers", screen=SCREEN)["elements"]


def test_a_region_overlapping_a_candidate_by_less_than_half_is_not_that_candidate():
    # [220, 10, 400, 60] against [220, 10, 580, 60]: intersection over union 0.5 exactly, then just under
    at_half = predict_reply(
        {"results": [{"result": [_region(*_percent([220, 10, 580, 60]))]}]}, stage="answers", screen=SCREEN
    )
    assert at_half["elements"] == [{"vh_index": 4, "score": 1.0}]
    under = predict_reply(
        {"results": [{"result": [_region(*_percent([220, 10, 590, 60]))]}]}, stage="answers", screen=SCREEN
    )
    assert under["elements"] == []


def test_choices_become_the_judgments_and_free_texts_the_short_answers():
    reply = {
        "results": [
            {
                "score": 0.8,
                "result": [
                    {"type": "choices", "from_name": "judgment", "value": {"choices": ["vh_out_of_sync"]}},
                    {"type": "textarea", "from_name": "short_answer", "value": {"text": ["$3.99", " "]}, "score": 0.6},
                    {"id": "r1", "type": "textarea", "from_name": "element_text", "value": {"text": ["a region's"]}},
                ],
            }
        ]
    }
    judged = suggest_response(predict_reply(reply, stage="prefilter", screen=SCREEN), stage="prefilter", screen=SCREEN)
    assert judged["judgments"] == {"non_english_app": 0.0, "vh_out_of_sync": 0.8}
    short = predict_reply(reply, stage="short-answers", screen=SCREEN)
    assert short["short_answers"] == [{"text": "$3.99", "score": 0.6}]


@pytest.mark.parametrize(
    "reply",
    [
        {"results": []},
        {"results": "none"},
        {"predictions": [{"result": []}]},
        [{"result": "boxes"}],
        [{"result": [{"type": "rectanglelabels", "value": "10,10,5,5"}]}],
        [{"result": [{"type": "rectanglelabels", "value": {"x": "10", "y": 1, "width": 1, "height": 1}}]}],
        [{"score": True, "result": []}],
        [{"result": [{"type": "rectanglelabels", "value": {"x": float("nan"), "y": 1, "width": 1, "height": 1}}]}],
        [{"result": [{"type": "rectanglelabels", "value": {"x": 1, "y": 1, "width": float("inf"), "height": 1}}]}],
    ],
)
def test_what_is_not_predictions_is_refused_whole(reply):
    with pytest.raises(ContractError):
        predict_reply(reply, stage="answers", screen=SCREEN)


def test_only_the_first_results_of_a_flood_are_read():
    flood = [_region(*_percent([500, 500, 700, 560]))] * 100_000 + [_region(*_percent([220, 10, 400, 60]))]
    assert predict_reply([{"result": flood}], stage="answers", screen=SCREEN)["elements"] == []


def test_a_judgment_score_outside_zero_to_one_breaks_the_contract():
    reply = [{"score": 3.2, "result": [{"type": "choices", "value": {"choices": ["non_english_app"]}}]}]
    with pytest.raises(ContractError, match="probability"):
        suggest_response(predict_reply(reply, stage="prefilter", screen=SCREEN), stage="prefilter", screen=SCREEN)


# --- a project whose backend is a Label Studio ML backend -------------------------------------------


def _fake_label_studio(body):
    """Predictions as a Label Studio ML backend makes them: the answers stage gets a box over the
    candidate whose text the question quotes; pre-filtering gets "out of sync"."""
    (task,) = body["tasks"]
    data = task["data"]
    if data["stage"] == "prefilter":
        result = [{"type": "choices", "value": {"choices": ["vh_out_of_sync"]}, "score": 0.75}]
    else:
        wanted = next(c for c in data["candidates"] if c["text"] and c["text"] in data["question"])
        left, top, right, bottom = wanted["bounds"]
        w, h = data["width"], data["height"]
        result = [
            {
                "type": "rectanglelabels",
                "original_width": w,
                "original_height": h,
                "value": {
                    "x": 100 * left / w,
                    "y": 100 * top / h,
                    "width": 100 * (right - left) / w,
                    "height": 100 * (bottom - top) / h,
                    "rectanglelabels": ["answer"],
                },
                "score": 0.66,
            }
        ]
    return 200, {"results": [{"result": result, "score": 0.5, "model_version": "ls-fake-1"}]}


def test_a_project_with_a_label_studio_backend_gets_its_suggestions_in_both_stages(project):
    a = member(project, "a")
    judged, asked = screens(project, 2, state=ScreenState.PREFILTER)
    question = answering_question(asked, text=f"What does Label 2 of {asked.rico_id} say?")
    with scripted(_fake_label_studio) as (url, seen):
        _with_backend(project, url, assist_protocol=AssistProtocol.LABEL_STUDIO, assist_token="s3cret")
        assert _run_job(project) == {"suggested": 2, "failed": 0}
    assert {call["path"] for call in seen} == {"/predict"}
    assert all(call["authorization"] == "Bearer s3cret" for call in seen)
    assert all(call["body"]["label_config"] == LABEL_CONFIG for call in seen)
    # the answers workspace: the box became candidate 2, with the screen's own bounds and text
    lease = assignment_next(project=project, user=a, stage="answers")
    suggestion = assignment_payload(assignment=lease)["suggestion"]
    top = suggestion["elements"][0]
    candidate = asked.candidates.get(vh_index=2)
    assert (top["vh_index"], top["text"], top["bounds"], top["score"]) == (2, candidate.text, candidate.bounds, 0.66)
    assert suggestion["model_version"] == "ls-fake-1"
    body = {"question": question.text, "verdict": "answered", "elements": [{"vh_index": 2}], "full_answer": "So."}
    assert assignment_submit(assignment_id=lease.pk, user=a, data=body).answer.suggestion_use == "accepted"
    # pre-filtering: the choice became the judgment
    lease = assignment_next(project=project, user=a, stage="prefilter")
    assert lease.screen_id == judged.pk
    suggestion = assignment_payload(assignment=lease)["suggestion"]
    assert suggestion["judgments"] == {"non_english_app": False, "vh_out_of_sync": True}
    assert suggestion["scores"] == {"non_english_app": 0.0, "vh_out_of_sync": 0.75}
    assignment_submit(assignment_id=lease.pk, user=a, data={"non_english_app": False, "vh_out_of_sync": True})
    assert AssistUse.objects.get(assignment=lease).use == "accepted"


def test_a_label_studio_backend_that_answers_nonsense_fails_the_call_and_is_counted(project):
    (screen,) = screens(project, 1, state=ScreenState.PREFILTER)
    with scripted(lambda body: (200, {"results": "nothing"})) as (url, _seen):
        _with_backend(project, url, assist_protocol=AssistProtocol.LABEL_STUDIO)
        assert _run_job(project) == {"suggested": 0, "failed": 1}
        backend = Backend.of(project)
        with pytest.raises(AssistError, match="breaks the contract"):
            backend_call(
                backend=backend, body=suggest_request(stage="prefilter", project="p", screen=SCREEN), screen=SCREEN
            )
    row = Suggestion.objects.get(screen=screen)
    assert row.status == SuggestionStatus.FAILED and "predictions" in row.error

"""An adapter to Label Studio's ML-backend protocol (docs/assist.md, "A Label Studio ML backend"), beside
the product's own contract: a team that already runs a Label Studio backend for screenshots (an OCR model,
a UI detector, an LLM wrapper built on ``label-studio-ml``) sets the project's ``assist_protocol`` to
``label-studio`` and its ``assist_url`` to the backend.

``predict_request`` turns the product's request (``contract.suggest_request``) into the body of
``POST {url}/predict``: one task whose ``data`` holds the screenshot's URL, the question, the screen's
VH candidates and (short answers) the answer, with ``LABEL_CONFIG`` as the labeling config.
``predict_reply`` turns the backend's predictions back into the product's reply, which the client then
checks with ``contract.suggest_response`` like any other (a broken reply is a failed call, never a
half-trusted suggestion):

* answers: each ``rectanglelabels`` (or ``rectangle``) region, in **percent** of the image, becomes
  screenshot pixels; a region that covers a VH candidate (intersection over union at least
  ``MATCH_IOU``) suggests that candidate, another one a drawn box with the text of its per-region
  ``textarea`` (a box without a text is left out: the contract needs one); the score is the region's,
  else the prediction's;
* pre-filtering: a ``choices`` result whose choices name ``non_english_app`` / ``vh_out_of_sync``: a
  chosen judgment gets the result's (or the prediction's) score as its probability, the other 0;
* short answers: each text of a ``textarea`` result not tied to a region, best score first.

Pure functions: no queries, no I/O (``client.backend_call`` does the call).
"""

from __future__ import annotations

import math
from typing import Any

from .contract import ELEMENTS_MAX, JUDGMENTS, ContractError

# The labeling config sent with every call: what the product asks of the backend, in Label Studio's terms.
LABEL_CONFIG = """<View>
  <Image name="screen" value="$image"/>
  <Header value="$question"/>
  <RectangleLabels name="element" toName="screen"><Label value="answer"/></RectangleLabels>
  <TextArea name="element_text" toName="screen" perRegion="true"/>
  <Choices name="judgment" toName="screen" choice="multiple">
    <Choice value="non_english_app"/><Choice value="vh_out_of_sync"/>
  </Choices>
  <TextArea name="short_answer" toName="screen"/>
</View>"""
# A region suggests a candidate when their boxes overlap at least this much (intersection over union).
MATCH_IOU = 0.5
BOX_TYPES = ("rectanglelabels", "rectangle")
# At most this many results of a prediction are read (the contract keeps 20 elements; a backend that
# answers a million regions costs no more than this).
RESULTS_MAX = ELEMENTS_MAX * 10


def predict_request(body: dict[str, Any]) -> dict[str, Any]:
    """The ``/predict`` body for the product's request ``body``: one task (its ``id`` the question's,
    else the screen's RICO id)."""
    screen, question = body["screen"], body.get("question") or {}
    data = {
        "image": screen["image_url"],
        "question": question.get("text", ""),
        "stage": body["stage"],
        "rico_id": screen["rico_id"],
        "app": screen.get("app", ""),
        "width": screen["width"],
        "height": screen["height"],
        "candidates": screen["candidates"],
    }
    if body.get("answer") is not None:
        data["answer"] = body["answer"]
    rico_id = str(screen["rico_id"])
    return {
        "tasks": [{"id": question.get("id") or (int(rico_id) if rico_id.isdigit() else rico_id), "data": data}],
        "model_version": "",
        "project": body["project"],
        "label_config": LABEL_CONFIG,
        "params": {"context": None},
    }


def _prediction(reply: Any) -> dict[str, Any]:
    """The first task's prediction, from either shape ``label-studio-ml`` answers in: ``{"results": [...]}``
    (its newer versions) or a bare list."""
    predictions = reply.get("results") if isinstance(reply, dict) else reply
    if not isinstance(predictions, list) or not predictions:
        raise ContractError('predictions: a non-empty list (or {"results": [...]}) is required')
    first = predictions[0]
    if not isinstance(first, dict) or not isinstance(first.get("result", []), list):
        raise ContractError("predictions[0]: an object with a list of results is required")
    return first


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ContractError(f"{where}: a finite number is required")
    return float(value)


def _pixels(value: dict[str, Any], screen: dict[str, Any], where: str) -> list[int]:
    """A region's percent box as screenshot pixels ``[l, t, r, b]``, clipped to the screenshot."""
    width, height = screen["width"], screen["height"]
    x, y = _number(value.get("x"), f"{where}.x"), _number(value.get("y"), f"{where}.y")
    w, h = _number(value.get("width"), f"{where}.width"), _number(value.get("height"), f"{where}.height")
    # percent of the image the backend saw; the screenshot is the same image
    left, top = round(x / 100 * width), round(y / 100 * height)
    right, bottom = round((x + w) / 100 * width), round((y + h) / 100 * height)
    left, top = max(0, min(left, width)), max(0, min(top, height))
    right, bottom = max(0, min(right, width)), max(0, min(bottom, height))
    return [left, top, right, bottom]


def _iou(a: list[int], b: list[int]) -> float:
    inter_w = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    inter_h = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = inter_w * inter_h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _texts(value: dict[str, Any]) -> list[str]:
    text = value.get("text")
    texts = text if isinstance(text, list) else [text]
    return [t for t in texts if isinstance(t, str) and t.strip()]


def _elements(results: list[Any], default_score: float, screen: dict[str, Any]) -> list[dict[str, Any]]:
    region_text = {
        item.get("id"): _texts(item.get("value") or {})
        for item in results
        if isinstance(item, dict) and item.get("type") == "textarea" and item.get("id") is not None
    }
    candidates = [c for c in screen["candidates"] if _iou(list(c["bounds"]), list(c["bounds"])) > 0]  # boxes with area
    out: list[dict[str, Any]] = []
    for i, item in enumerate(results):
        if not isinstance(item, dict) or item.get("type") not in BOX_TYPES:
            continue
        where = f"result[{i}]"
        if not isinstance(item.get("value"), dict):
            raise ContractError(f"{where}.value: an object is required")
        bounds = _pixels(item["value"], screen, f"{where}.value")
        if bounds[2] <= bounds[0] or bounds[3] <= bounds[1]:
            continue  # nothing of it lies on the screenshot
        score = _number(item.get("score", default_score), f"{where}.score")
        best = max(candidates, key=lambda c: _iou(bounds, list(c["bounds"])), default=None)
        if best is not None and _iou(bounds, list(best["bounds"])) >= MATCH_IOU:
            out.append({"vh_index": best["vh_index"], "score": score})
            continue
        texts = region_text.get(item.get("id")) or []
        if texts:
            out.append({"bounds": bounds, "text": texts[0], "score": score})
    return out


def _judgments(results: list[Any], default_score: float) -> dict[str, float]:
    judged = dict.fromkeys(JUDGMENTS, 0.0)
    for i, item in enumerate(results):
        if not isinstance(item, dict) or item.get("type") != "choices":
            continue
        choices = (item.get("value") or {}).get("choices")
        if not isinstance(choices, list):
            raise ContractError(f"result[{i}].value.choices: a list is required")
        score = _number(item.get("score", default_score), f"result[{i}].score")
        for name in JUDGMENTS:
            if name in choices:
                judged[name] = max(judged[name], score)
    return judged


def _short_answers(results: list[Any], default_score: float) -> list[dict[str, Any]]:
    out = []
    for i, item in enumerate(results):
        # a per-region text names an element; a text of its own is a short answer
        if not isinstance(item, dict) or item.get("type") != "textarea" or item.get("id") is not None:
            continue
        score = _number(item.get("score", default_score), f"result[{i}].score")
        out += [{"text": text, "score": score} for text in _texts(item.get("value") or {})]
    return out


def predict_reply(reply: Any, *, stage: str, screen: dict[str, Any]) -> dict[str, Any]:
    """The backend's predictions as the product's reply for ``stage`` (checked next by
    ``suggest_response``); ``ContractError`` when they are not predictions at all."""
    prediction = _prediction(reply)
    results = (prediction.get("result") or [])[:RESULTS_MAX]
    default_score = _number(prediction.get("score", 1.0), "predictions[0].score")
    version = prediction.get("model_version") or (reply.get("model_version") if isinstance(reply, dict) else "")
    out: dict[str, Any] = {"model_version": version if isinstance(version, str) else str(version)}
    if stage == "answers":
        out["elements"] = _elements(results, default_score, screen)
    elif stage == "prefilter":
        out["judgments"] = _judgments(results, default_score)
    else:
        out["short_answers"] = _short_answers(results, default_score)
    return out

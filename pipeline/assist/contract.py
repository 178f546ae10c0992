"""The suggestion contract, version 1 (docs/assist.md has it with examples).

The product sends ``POST {url}/suggest`` with a JSON body (``suggest_request``):

    {"contract": "screenqa-assist/1", "stage": "answers" | "prefilter" | "short-answers",
     "project": <slug>,
     "screen": {"rico_id", "app", "width", "height", "image_url",
                "candidates": [{"vh_index", "bounds": [l, t, r, b], "text", "type", "class_name"}]},
     "question": {"id", "text"} | null,
     "answer": {"elements": [<text>, ...], "full_answer": <text>} | null}      (short-answers only)

and ``Authorization: Bearer <token>`` when the project has a token. The backend answers 200 with

    {"model_version": <text>,
     "elements": [{"vh_index": <int>, "score": <number>} | {"bounds": [l, t, r, b], "text", "score"}, ...],
     "judgments": {"non_english_app": <0..1>, "vh_out_of_sync": <0..1>},
     "short_answers": [{"text", "score"}, ...]}

each key for its stage (the others may be absent). ``suggest_response`` checks a reply against the
screen: anything malformed is a ``ContractError`` (the call counts as failed), never a half-trusted
suggestion. Elements come back ranked by score, best first, at most ``ELEMENTS_MAX``; a candidate's
bounds and text are the screen's own, whatever the backend said.
"""

from __future__ import annotations

import math
from typing import Any

CONTRACT = "screenqa-assist/1"
STAGES = ("answers", "prefilter", "short-answers")
ELEMENTS_MAX = 20
SHORT_ANSWERS_MAX = 20
TEXT_MAX = 2000
JUDGMENTS = ("non_english_app", "vh_out_of_sync")


class ContractError(ValueError):
    """A backend's reply that breaks the contract; the message says where."""


def suggest_request(
    *,
    stage: str,
    project: str,
    screen: dict[str, Any],
    question: dict[str, Any] | None = None,
    answer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request body. ``screen`` is the screen's wire payload (``screen_payload``): only the fields
    of the contract are sent."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    return {
        "contract": CONTRACT,
        "stage": stage,
        "project": project,
        "screen": {
            "rico_id": screen["rico_id"],
            "app": screen.get("app", ""),
            "width": screen["width"],
            "height": screen["height"],
            "image_url": screen.get("image_url", ""),
            "candidates": [
                {
                    "vh_index": c["vh_index"],
                    "bounds": list(c["bounds"]),
                    "text": c.get("text") or "",
                    "type": c.get("type", ""),
                    "class_name": c.get("class_name", ""),
                }
                for c in screen["candidates"]
            ],
        },
        "question": question,
        "answer": answer,
    }


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ContractError(f"{where}: the score must be a finite number")
    return float(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContractError(f"{where}: a non-empty text is required")
    return " ".join(value.split())[:TEXT_MAX]


def _elements(raw: Any, screen: dict[str, Any]) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ContractError("elements: a list is required")
    candidates = {c["vh_index"]: c for c in screen["candidates"]}
    width, height = screen["width"], screen["height"]
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for i, item in enumerate(raw[: ELEMENTS_MAX * 5]):
        where = f"elements[{i}]"
        if not isinstance(item, dict):
            raise ContractError(f"{where}: an object is required")
        score = _score(item.get("score"), where)
        vh_index = item.get("vh_index")
        if vh_index is not None:
            if type(vh_index) is not int or vh_index not in candidates:
                raise ContractError(f"{where}: vh_index {vh_index!r} is not a candidate of this screen")
            if vh_index in seen:
                continue
            seen.add(vh_index)
            candidate = candidates[vh_index]
            text = " ".join((candidate.get("text") or "").split())
            out.append({"vh_index": vh_index, "bounds": list(candidate["bounds"]), "text": text, "score": score})
            continue
        bounds = item.get("bounds")
        if not (isinstance(bounds, list) and len(bounds) == 4 and all(type(v) is int for v in bounds)):
            raise ContractError(f"{where}: give a vh_index or bounds [l, t, r, b] (integers)")
        left, top, right, bottom = bounds
        if not (0 <= left < right <= width and 0 <= top < bottom <= height):
            raise ContractError(f"{where}: the box must lie inside the {width}x{height} screenshot")
        out.append({"vh_index": None, "bounds": bounds, "text": _text(item.get("text"), where), "score": score})
    out.sort(key=lambda e: -e["score"])
    return out[:ELEMENTS_MAX]


def _judgments(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise ContractError("judgments: an object is required")
    out = {}
    for name in JUDGMENTS:
        if name in raw:
            value = _score(raw[name], f"judgments.{name}")
            if not 0 <= value <= 1:
                raise ContractError(f"judgments.{name}: a probability in [0, 1] is required")
            out[name] = value
    return out


def _short_answers(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ContractError("short_answers: a list is required")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(raw[:SHORT_ANSWERS_MAX]):
        where = f"short_answers[{i}]"
        if not isinstance(item, dict):
            raise ContractError(f"{where}: an object is required")
        out.append({"text": _text(item.get("text"), where), "score": _score(item.get("score", 1.0), where)})
    out.sort(key=lambda e: -e["score"])
    return out


def suggest_response(reply: Any, *, stage: str, screen: dict[str, Any]) -> dict[str, Any]:
    """The checked reply: ``{"model_version", and the stage's key}``; ``ContractError`` otherwise."""
    if not isinstance(reply, dict):
        raise ContractError("the reply must be a JSON object")
    version = reply.get("model_version", "")
    if not isinstance(version, str):
        raise ContractError("model_version: text is required")
    result: dict[str, Any] = {"model_version": version[:100]}
    if stage == "answers":
        result["elements"] = _elements(reply.get("elements", []), screen)
    elif stage == "prefilter":
        result["judgments"] = _judgments(reply.get("judgments", {}))
    else:
        result["short_answers"] = _short_answers(reply.get("short_answers", []))
    return result

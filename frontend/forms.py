"""Form parsing for the annotator workspace, and the live writing hints.

The workspace pages post ordinary HTML forms (they work without JavaScript, except the
answer's element list, which the box editor keeps in one hidden JSON field). Each
``*_body`` function turns a POST into the engine's submit body (see
``pipeline.stages.assignment_submit``) or raises ``FormError`` naming the field, so that
the page can show the reason next to it. The engine validates again: these checks only
give the annotator the reason before a round trip through the service.

``question_hints`` is pure: the hints shown while a writer types (near duplicates of a
question already on the screen, and questions that break the writing rules of PIPELINE.md
stage 3). They are advice, never a refusal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from django.http import QueryDict

# Bounds of a hand-drawn box are screenshot pixels; 20k is far above any RICO screenshot.
MAX_COORD = 20_000
MAX_TEXT = 1_000  # questions and element texts (the engine's limit)
MAX_NOTE = 2_000
MAX_FULL_ANSWER = 5_000
MAX_ELEMENTS = 50
# Two questions whose normalised texts are this similar are flagged as near duplicates.
DUPLICATE_RATIO = 0.82


class FormError(Exception):
    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def _text(post: QueryDict, name: str) -> str:
    return (post.get(name) or "").strip()


def flag(post: QueryDict, name: str) -> bool:
    return (post.get(name) or "").lower() in {"1", "on", "true", "yes"}


def prefilter_body(post: QueryDict) -> dict[str, Any]:
    note = _text(post, "note")
    if len(note) > MAX_NOTE:
        raise FormError(f"The note is longer than {MAX_NOTE} characters.", field="note")
    return {
        "non_english_app": flag(post, "non_english_app"),
        "vh_out_of_sync": flag(post, "vh_out_of_sync"),
        "note": note,
    }


def questions_body(post: QueryDict, *, cap: int) -> dict[str, Any]:
    """``{"questions": [...]}``. An empty list only through the explicit "nothing to ask" action."""
    if post.get("action") == "nothing":
        return {"questions": []}
    questions = [q.strip() for q in post.getlist("question") if q.strip()]
    if not questions:
        raise FormError("Write at least one question, or choose “Nothing to ask”.", field="questions")
    if len(questions) > cap:
        raise FormError(f"At most {cap} questions in this pass.", field="questions")
    for q in questions:
        if len(q) > MAX_TEXT:
            raise FormError(f"A question is longer than {MAX_TEXT} characters.", field="questions")
    lowered = [q.lower() for q in questions]
    if len(set(lowered)) != len(lowered):
        raise FormError("The same question is written twice.", field="questions")
    return {"questions": questions}


def not_answerable_body(post: QueryDict) -> dict[str, Any]:
    question = _text(post, "question")
    if not question:
        raise FormError("Write one question that this screen cannot answer.", field="question")
    if len(question) > MAX_TEXT:
        raise FormError(f"The question is longer than {MAX_TEXT} characters.", field="question")
    return {"question": question}


def _element(raw: Any, position: int) -> dict[str, Any]:
    where = f"Element {position}"
    if not isinstance(raw, dict):
        raise FormError(f"{where} is not an element.", field="elements")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise FormError(f"{where} has no text: type what it shows.", field="elements")
    if len(text) > MAX_TEXT:
        raise FormError(f"{where}: text longer than {MAX_TEXT} characters.", field="elements")
    vh_index = raw.get("vh_index")
    if vh_index is not None and vh_index != -1:
        if not isinstance(vh_index, int) or isinstance(vh_index, bool) or vh_index < 0:
            raise FormError(f"{where} names no element of this screen.", field="elements")
        return {"vh_index": vh_index, "text": text.strip()}
    bounds = raw.get("bounds")
    if (
        not isinstance(bounds, list)
        or len(bounds) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in bounds)
    ):
        raise FormError(f"{where} has no box.", field="elements")
    left, top, right, bottom = (round(v) for v in bounds)
    if not (0 <= left < right <= MAX_COORD and 0 <= top < bottom <= MAX_COORD):
        raise FormError(f"{where}: the box is empty or outside the screenshot.", field="elements")
    return {"bounds": [left, top, right, bottom], "text": text.strip()}


def answer_elements(raw_json: str) -> list[dict[str, Any]]:
    """The hidden ``elements`` field (JSON list) as the engine's element list, in order."""
    if not raw_json.strip():
        return []
    try:
        raw = json.loads(raw_json)
    except ValueError as exc:
        raise FormError(
            "The element list could not be read; reload the page (your draft is kept).", field="elements"
        ) from exc
    if not isinstance(raw, list):
        raise FormError("The element list could not be read.", field="elements")
    if len(raw) > MAX_ELEMENTS:
        raise FormError(f"At most {MAX_ELEMENTS} elements.", field="elements")
    return [_element(item, i + 1) for i, item in enumerate(raw)]


def answer_body(post: QueryDict) -> dict[str, Any]:
    """The answers stage. ``action`` is ``answer`` (default), ``invalid`` or ``not_answerable``."""
    action = post.get("action") or "answer"
    verdict = {"answer": "answered", "invalid": "invalid", "not_answerable": "not_answerable"}.get(action)
    if verdict is None:
        raise FormError("Unknown action.", field="action")
    question = _text(post, "question")
    full_answer = _text(post, "full_answer")
    if not question:
        raise FormError("The question cannot be empty (fix its typos, keep its intent).", field="question")
    if len(question) > MAX_TEXT:
        raise FormError(f"The question is longer than {MAX_TEXT} characters.", field="question")
    if len(full_answer) > MAX_FULL_ANSWER:
        raise FormError(f"The answer is longer than {MAX_FULL_ANSWER} characters.", field="full_answer")
    if verdict != "answered":
        return {"question": question, "verdict": verdict, "elements": [], "full_answer": full_answer}
    elements = answer_elements(post.get("elements") or "")
    if not elements:
        raise FormError("Select or draw at least one element (or mark the question).", field="elements")
    if not full_answer:
        raise FormError("Write the answer as a full sentence.", field="full_answer")
    return {"question": question, "verdict": verdict, "elements": elements, "full_answer": full_answer}


# --- hints -----------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Hint:
    kind: str
    message: str


_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (
        "counting",
        re.compile(r"\b(how many|number of|count|total (number|count))\b", re.I),
        "Looks like counting: answers must be read off the screen, not counted.",
    ),
    (
        "arithmetic",
        re.compile(
            r"\b(sum|add up|plus|minus|difference between|average|total of|multipl|divid|percent(age)? of)\b", re.I
        ),
        "Looks like arithmetic: no calculation, the answer must be printed on the screen.",
    ),
    (
        "comparison",
        re.compile(
            r"\b(more|less|fewer|higher|lower|cheaper|bigger|smaller|larger|older|newer|longer|shorter|greater)\b"
            r".*\bthan\b|\b(most|least|highest|lowest|cheapest|biggest|smallest|largest|best|worst)\b",
            re.I,
        ),
        "Looks like a comparison: no comparing values across the screen.",
    ),
    (
        "yes-no",
        re.compile(r"^\s*(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|am)\b|^\s*why\b", re.I),
        "Yes/no or why question: only when the screen states the answer itself.",
    ),
    (
        "ad",
        re.compile(r"\b(ad|ads|advert\w*|sponsor\w*|promot\w*|banner)\b", re.I),
        "About an ad? Questions about advertisements are not allowed.",
    ),
]


def question_hints(text: str, *, others: list[str]) -> list[Hint]:
    """Hints for one question as typed, against the ``others`` already on this screen.

    Near duplicate: normalised texts (lower-case words) with a similarity ratio of at
    least ``DUPLICATE_RATIO`` (difflib), or the same bag of words.
    """
    text = text.strip()
    if len(text) < 4:
        return []
    hints: list[Hint] = []
    norm = _normalise(text)
    for other in others:
        other_norm = _normalise(other)
        if not other_norm:
            continue
        same_words = sorted(norm.split()) == sorted(other_norm.split())
        if same_words or SequenceMatcher(None, norm, other_norm).ratio() >= DUPLICATE_RATIO:
            hints.append(Hint("duplicate", f"Near duplicate of “{other.strip()}”."))
            break
    for kind, pattern, message in _RULES:
        if pattern.search(text):
            hints.append(Hint(kind, message))
    return hints

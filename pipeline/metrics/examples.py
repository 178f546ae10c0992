"""Example predictions from a release's own files, for trying ``manage.py score`` (the README's line)
and for seeing what the figures say about two simple baselines (docs/scoring.md):

* ``question``: a model that reads only the question: the question itself as the full answer, its
  last word as the short answer, and no UI element. It shows how low each figure is for an answer
  that is not looked for on the screen (not-answerable questions, whose right elements are none,
  score on the element tasks).
* ``first-answer``: each question's first ground truth (the first annotator's full answer and
  elements with their boxes, the first short answer). Every figure is 1: the file is a check that
  the scorer reads a release's answers as its own.

The predictions carry every field the scorer reads (``short_answer``, ``full_answer``,
``ui_elements`` with ``bounds``), so every ScreenQA task is reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .scorer import ScoringInputError, load_gold

BASELINES = ("question", "first-answer")
_WORD = re.compile(r"[\w'-]+")


def _last_word(question: str) -> str:
    words = _WORD.findall(question)
    return words[-1] if words else ""


def example_predictions(
    *, gold_paths: Sequence[Path | str], baseline: str = "question", leave_out: int = 0
) -> list[dict[str, Any]]:
    """Predictions for every question of the ScreenQA gold files (``answers_and_bboxes`` and/or
    ``short_answers`` of one split), by ``baseline``, in the gold's order of keys. ``leave_out``
    > 0 leaves out every ``leave_out``-th question (to see the two averages of the scorer differ).
    ``ScoringInputError`` for a file the scorer would refuse, a DocVQA file, or an unknown baseline."""
    if baseline not in BASELINES:
        raise ScoringInputError(f"unknown baseline {baseline!r}: one of {', '.join(BASELINES)}")
    if leave_out < 0:
        raise ScoringInputError("leave_out must be 0 or more")
    kind, gold = load_gold(gold_paths)
    if kind != "screenqa":
        raise ScoringInputError("example predictions are made from ScreenQA release files, not a DocVQA file")
    predictions = []
    for n, ((image_id, question), example) in enumerate(sorted(gold.items()), start=1):
        if leave_out and n % leave_out == 0:
            continue
        prediction: dict[str, Any] = {"image_id": image_id, "question": question}
        if baseline == "question":
            prediction.update(short_answer=_last_word(question), full_answer=question, ui_elements=[])
        else:
            if example.short_answers:
                prediction["short_answer"] = example.short_answers[0]
            if example.raters:
                first = example.raters[0]
                prediction["full_answer"] = first.full_answer
                prediction["ui_elements"] = [
                    {"text": e.text, **({"bounds": list(e.bounds)} if e.bounds is not None else {})}
                    for e in first.elements
                ]
        predictions.append(prediction)
    return predictions

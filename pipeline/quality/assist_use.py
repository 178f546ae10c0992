"""What an annotator did with a suggestion, and the rule against rubber-stamping it (docs/assist.md).

``assist_recorded`` runs for every submission of the answers stage inside its transaction (real
work and control items alike): it works out ``suggestion_use`` (the suggestion shown is the one
``next`` reads, ``pipeline.assist.service.suggestion_for``), writes it on the answer, and keeps an
``AssistUse`` row. On a control item it also scores the suggestion itself against the gold answer
(with the stage's own ``gold_score``): an annotator who accepts unchanged more than
``assist_wrong_accept_threshold`` of the wrong suggestions they met on control items, once they met
``assist_wrong_accept_min`` of them, is paused by the rule ``accepts-wrong-suggestions`` (the same
pause as the other rules: leases released, work withdrawn as the project says).

A suggestion never counts as an answer: nothing here writes an answer, and accepting one still
needs the annotator's own submission (with a full-sentence answer of their own).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from annotation.models import (
    Answer,
    Assignment,
    AssistUse,
    ControlResult,
    GoldItem,
    Purpose,
    Stage,
    SuggestionUse,
    Verdict,
)
from pipeline.assist.service import suggestion_for
from pipeline.stages.base import StageDefinition

from .standing import rules_apply


def _same_element(given: dict[str, Any], suggested: dict[str, Any]) -> bool:
    if suggested.get("vh_index") is not None:
        same_place = given.get("vh_index") == suggested["vh_index"]
    else:
        same_place = given.get("vh_index") is None and list(given.get("bounds") or []) == suggested["bounds"]
    return same_place and " ".join(str(given.get("text") or "").split()) == suggested["text"]


def suggestion_use_of(*, suggestion: dict[str, Any] | None, cleaned: dict[str, Any]) -> str:
    """``accepted``: answered with exactly the suggested (first-ranked) element, its text unchanged;
    ``edited``: a suggestion was shown and the answer differs; ``none``: none was shown."""
    if not suggestion or not suggestion.get("elements"):
        return SuggestionUse.NONE
    elements = cleaned.get("elements") or []
    answered = cleaned.get("verdict") == Verdict.ANSWERED and len(elements) == 1
    if answered and _same_element(elements[0], suggestion["elements"][0]):
        return SuggestionUse.ACCEPTED
    return SuggestionUse.EDITED


def suggestion_as_submission(suggestion: dict[str, Any], question: str) -> dict[str, Any]:
    """The first-ranked element as an answer, to score the suggestion itself against a gold answer."""
    top = suggestion["elements"][0]
    element = {"vh_index": top.get("vh_index"), "bounds": list(top["bounds"]), "text": top["text"]}
    return {"verdict": Verdict.ANSWERED, "elements": [element], "question": question}


def assist_recorded(*, stage: StageDefinition, assignment: Assignment, cleaned: dict[str, Any], now: datetime) -> None:
    """After ``apply`` (real work) or ``gold_submitted`` (a gold item), in the submit's transaction."""
    if stage.name != Stage.ANSWERS or assignment.question_id is None:
        return
    project = assignment.project
    if not project.assist_url:
        # No backend: nothing was shown (the answer's default says so); no row to keep.
        return
    suggestion = suggestion_for(project=project, question_id=assignment.question_id)
    use = suggestion_use_of(suggestion=suggestion, cleaned=cleaned)
    wrong = correct = None
    if assignment.purpose == Purpose.WORK:
        Answer.objects.filter(assignment=assignment).update(suggestion_use=use)
        cached = assignment._state.fields_cache.get("answer")  # the instance ``apply`` just created
        if cached is not None:
            cached.suggestion_use = use
    else:
        correct = ControlResult.objects.filter(assignment=assignment).values_list("correct", flat=True).first()
        if suggestion is not None and assignment.gold_id is not None:
            gold = GoldItem.objects.get(pk=assignment.gold_id)
            right, _ = stage.gold_score(
                given=suggestion_as_submission(suggestion, cleaned.get("question", "")),
                gold=gold.answer,
                project=project,
            )
            wrong = not right
    AssistUse.objects.create(
        assignment=assignment,
        project=project,
        user_id=assignment.annotator_id,
        stage=stage.name,
        purpose=assignment.purpose,
        use=use,
        suggestion_wrong=wrong,
        correct=correct,
    )
    if assignment.purpose == Purpose.CONTROL and wrong:
        rules_apply(on="suggestion", stage=stage, assignment=assignment, now=now)

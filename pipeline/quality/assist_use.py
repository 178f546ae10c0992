"""What an annotator did with a suggestion, and the rule against rubber-stamping it (docs/assist.md).

``assist_recorded`` runs for every submission of an assisted stage (answers, pre-filtering) inside
its transaction (real work and control items alike): it works out what the submission did with the
suggestion (the stage's ``suggestion_use``; the suggestion shown is the one ``next`` reads, the stage's
``suggestion``), lets the stage keep it on its own record (an answer's ``suggestion_use``), and keeps an
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

from annotation.models import Assignment, AssistUse, ControlResult, GoldItem, Purpose
from pipeline.stages.base import StageDefinition

from .standing import rules_apply


def assist_recorded(*, stage: StageDefinition, assignment: Assignment, cleaned: dict[str, Any], now: datetime) -> None:
    """After ``apply`` (real work) or ``gold_submitted`` (a gold item), in the submit's transaction."""
    if not stage.assisted:
        return
    project = assignment.project
    if not project.assist_url:
        # No backend: nothing was shown (the answer's default says so); no row to keep.
        return
    suggestion = stage.suggestion(assignment=assignment)
    use = stage.suggestion_use(suggestion=suggestion, cleaned=cleaned)
    wrong = correct = None
    if assignment.purpose == Purpose.WORK:
        stage.suggestion_kept(assignment=assignment, use=use)
    else:
        correct = ControlResult.objects.filter(assignment=assignment).values_list("correct", flat=True).first()
        if suggestion is not None and assignment.gold_id is not None:
            gold = GoldItem.objects.get(pk=assignment.gold_id)
            right, _ = stage.gold_score(
                given=stage.suggestion_submission(suggestion=suggestion, cleaned=cleaned),
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

"""Stage name (as in the API) -> its rules. The order is the pipeline's."""

from __future__ import annotations

from annotation.exceptions import NotFoundError

from .answers import AnswersRules
from .base import StageRules
from .not_answerable import NotAnswerableRules
from .prefilter import PrefilterRules
from .questions import QuestionsPass1Rules, QuestionsPass2Rules

STAGES: dict[str, StageRules] = {
    rules.stage: rules
    for rules in (
        PrefilterRules(),
        QuestionsPass1Rules(),
        QuestionsPass2Rules(),
        AnswersRules(),
        NotAnswerableRules(),
    )
}


def stage_rules(stage: str) -> StageRules:
    rules = STAGES.get(stage)
    if rules is None:
        raise NotFoundError(f"Unknown stage {stage!r}; stages are {', '.join(STAGES)}.", field="stage")
    return rules

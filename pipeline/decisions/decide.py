"""The post-processing decision rules (docs/postprocessing.md), in one pure function.

``question_decide`` keeps or drops one question and each of its answers from what the caller
read (no queries): one answer (train) or several (validation/test, decided by agreement,
``pipeline.decisions.agreement``). The reason codes are the ones the pages, the API and the
release manifest show.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from annotation.models import Project, QuestionState, Verdict

from .agreement import AgreementSettings, AnswerView, ElementView, agreement_group

# Question drop reasons.
REASON_INVALID = "invalid"
REASON_NO_USABLE_ANSWER = "no-usable-answer"
REASON_NO_AGREEMENT = "no-agreement"
REASON_AGREEMENT_TIE = "agreement-tie"
# Answer drop reasons.
REASON_DISAGREES = "disagrees"
REASON_NO_ELEMENTS = "no-elements"

QUESTION_REASONS = {
    REASON_INVALID: "judged invalid",
    REASON_NO_USABLE_ANSWER: "no usable answer",
    REASON_NO_AGREEMENT: "no two answers agree",
    REASON_AGREEMENT_TIE: "two different groups agree (tie)",
}
ANSWER_REASONS = {
    REASON_DISAGREES: "disagrees with the agreeing answers",
    REASON_NO_ELEMENTS: "answered without any element",
}
# Taken out by quality control (docs/quality.md): post-processing never decides these again.
REASON_REVIEW_REJECTED = "review-rejected"
REASON_AUTHOR_PAUSED = "author-paused"
REASON_AUTHOR_NOT_QUALIFIED = "author-not-qualified"
REASON_WITHDRAWN = "withdrawn"
# Taken out because the app is not in English (pipeline.stages.prefilter): not quality control.
REASON_NON_ENGLISH_APP = "non-english-app"
QUALITY_QUESTION_REASONS = {
    REASON_REVIEW_REJECTED: "rejected in review",
    REASON_AUTHOR_PAUSED: "its writer was paused by quality control",
    REASON_AUTHOR_NOT_QUALIFIED: "its writer did not qualify (review of their first submissions)",
}
QUALITY_ANSWER_REASONS = {
    REASON_REVIEW_REJECTED: "rejected in review",
    REASON_WITHDRAWN: "its annotator was paused by quality control",
}
# Pre-filtering judgments and reviews withdrawn by quality control (``withdrawn_reason``).
QUALITY_JUDGMENT_REASONS = QUALITY_ANSWER_REASONS
# A question made for a gold item only (the demo's gold set, devtools/demo): never real work.
REASON_GOLD_ONLY = "gold-only"
# Question reasons decided before post-processing, which never revisits them.
PREDECIDED_QUESTION_REASONS = {
    **QUALITY_QUESTION_REASONS,
    REASON_NON_ENGLISH_APP: "its app is not in English",
    REASON_GOLD_ONLY: "a gold item's question, asked only for quality control",
}
QUESTION_REASONS.update(PREDECIDED_QUESTION_REASONS)
ANSWER_REASONS.update(QUALITY_ANSWER_REASONS)
DECIDABLE_STATES = (QuestionState.ANSWERED, QuestionState.KEPT, QuestionState.DROPPED)
# Short answers a person wrote are never replaced by generated ones.
PROTECTED_SHORT_ANSWER_SOURCES = ("lead", "imported")

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class QuestionDecision:
    state: str
    final_text: str
    drop_reason: str
    agreement: str
    # answer pk -> (kept, drop_reason)
    answers: dict[int, tuple[bool, str]] = field(default_factory=dict)


def agreement_settings_for(project: Project) -> AgreementSettings:
    return AgreementSettings(
        use_boxes=project.agreement_use_boxes,
        iou_threshold=project.agreement_iou_threshold,
        rule=project.agreement_rule,
    )


def clean_text(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class AnswerRecord:
    """What the rules need of one answer (read with ``values_list``: no model instances per row)."""

    pk: int
    verdict: str
    question_text: str
    elements: tuple[ElementView, ...] = ()
    kept: bool = True  # the answer's current decision
    drop_reason: str = ""
    annotator_id: int | None = None

    @property
    def view(self) -> AnswerView:
        return AnswerView(verdict=self.verdict, elements=self.elements)

    @property
    def usable(self) -> bool:
        return self.verdict != Verdict.ANSWERED or bool(self.elements)


def _edited_text(text: str, answer: AnswerRecord) -> str:
    """The question as this answerer left it (their fix, else the original)."""
    return clean_text(answer.question_text) or clean_text(text)


def _majority_text(text: str, answers: Sequence[AnswerRecord]) -> str:
    """The question edit most of ``answers`` agree on.

    A tie at the top keeps the original text when it is among the tied texts, else the
    tied text of the earliest answer (``answers`` are in submission order).
    """
    texts = [_edited_text(text, a) for a in answers]
    counts = Counter(texts)
    top = max(counts.values())
    tied = [t for t in dict.fromkeys(texts) if counts[t] == top]
    if len(tied) == 1:
        return tied[0]
    original = clean_text(text)
    return original if original in tied else tied[0]


def question_decide(*, text: str, answers: Sequence[AnswerRecord], settings: AgreementSettings) -> QuestionDecision:
    """Keep or drop one question (as written: ``text``) and each of its answers (docs/postprocessing.md).

    ``answers`` in submission order. The number of answers picks the rule set: one answer
    (train by default) or several (validation/test by default). Pure: no queries.
    """
    if not answers:
        return QuestionDecision(QuestionState.DROPPED, "", REASON_NO_USABLE_ANSWER, "")
    if len(answers) == 1:
        answer = answers[0]
        if answer.verdict == Verdict.INVALID:
            return QuestionDecision(QuestionState.DROPPED, "", REASON_INVALID, "", {answer.pk: (True, "")})
        if not answer.usable:
            return QuestionDecision(
                QuestionState.DROPPED, "", REASON_NO_USABLE_ANSWER, "", {answer.pk: (False, REASON_NO_ELEMENTS)}
            )
        return QuestionDecision(QuestionState.KEPT, _edited_text(text, answer), "", "", {answer.pk: (True, "")})

    result = agreement_group([a.view for a in answers], settings=settings)
    if not result.group:
        reason = REASON_AGREEMENT_TIE if result.tie else REASON_NO_AGREEMENT
        return QuestionDecision(QuestionState.DROPPED, "", reason, result.label, {a.pk: (True, "") for a in answers})
    group = [answers[i] for i in result.group]
    in_group = {a.pk for a in group}
    answer_decisions = {
        a.pk: (True, "") if a.pk in in_group else (False, REASON_DISAGREES if a.usable else REASON_NO_ELEMENTS)
        for a in answers
    }
    # ``invalid`` agrees only with ``invalid`` under every rule, so a group is all invalid or none is.
    # A group may mix ``answered`` and ``not_answerable`` (the release rule): the question is kept with
    # both, as the release keeps an empty element list beside the answers.
    if group[0].verdict == Verdict.INVALID:
        return QuestionDecision(QuestionState.DROPPED, "", REASON_INVALID, result.label, answer_decisions)
    return QuestionDecision(QuestionState.KEPT, _majority_text(text, group), "", result.label, answer_decisions)

"""Reads of post-processing results: the shares and counts, and what was dropped and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Count, Model, QuerySet

from annotation.exceptions import ApplicationError
from annotation.models import Answer, AnswerElement, Project, Question, QuestionState, Split

from .agreement import ElementView
from .decide import ANSWER_REASONS, DECIDABLE_STATES, QUALITY_ANSWER_REASONS, QUESTION_REASONS, AnswerRecord


def _shares(counts: dict[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {label: (n / total if total else 0.0) for label, n in counts.items()}


def postprocess_summary(*, project: Project) -> dict[str, Any]:
    """Counts and agreement shares of the project's decisions, per split and overall. Two queries.

    ``agreement`` counts only questions with several answers (the ones agreement applies to), decided
    under ``agreement_rule`` (the project's rule now; a run after a change of rule re-decides);
    ``pending`` are answered questions no run has decided yet.
    """
    rows = (
        Question.objects.filter(screen__project=project, state__in=DECIDABLE_STATES)
        .values("screen__split", "state", "drop_reason", "agreement")
        .annotate(n=Count("pk"))
        .order_by()
    )
    splits: dict[str, dict[str, Any]] = {}
    overall = {"all": 0, "two": 0, "none": 0}
    for row in rows:
        split = row["screen__split"] or "unsplit"
        entry = splits.setdefault(
            split,
            {"questions": 0, "pending": 0, "kept": 0, "dropped": {}, "agreement": {"all": 0, "two": 0, "none": 0}},
        )
        n = row["n"]
        entry["questions"] += n
        if row["state"] == QuestionState.ANSWERED:
            entry["pending"] += n
            continue
        if row["state"] == QuestionState.KEPT:
            entry["kept"] += n
        else:
            entry["dropped"][row["drop_reason"]] = entry["dropped"].get(row["drop_reason"], 0) + n
        if row["agreement"] in overall:
            entry["agreement"][row["agreement"]] += n
            overall[row["agreement"]] += n
    for entry in splits.values():
        entry["agreement_shares"] = _shares(entry["agreement"])
    answers_dropped = dict(
        Answer.objects.filter(question__screen__project=project, kept=False)
        .values_list("drop_reason")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("drop_reason", "n")
    )
    order = [s.value for s in Split] + ["unsplit"]
    return {
        "splits": {s: splits[s] for s in order if s in splits},
        "agreement": overall,
        "agreement_shares": _shares(overall),
        "kept": sum(e["kept"] for e in splits.values()),
        "dropped": sum(sum(e["dropped"].values()) for e in splits.values()),
        "pending": sum(e["pending"] for e in splits.values()),
        "answers_dropped": answers_dropped,
        "agreement_rule": project.agreement_rule,
    }


def postprocess_decisions(
    *, project: Project, kind: str = "question", reason: str = "", split: str = ""
) -> QuerySet[Question] | QuerySet[Answer]:
    """Dropped questions (``kind="question"``) or dropped answers (``kind="answer"``), newest id first.

    Filters are checked: an unknown kind, reason or split is an ``ApplicationError`` (400).
    """
    if split and split not in Split.values:
        raise ApplicationError(f"Unknown split {split!r}.", field="split")
    if kind == "question":
        if reason and reason not in QUESTION_REASONS:
            raise ApplicationError(f"Unknown reason {reason!r}.", field="reason")
        questions = Question.objects.filter(screen__project=project, state=QuestionState.DROPPED)
        if reason:
            questions = questions.filter(drop_reason=reason)
        if split:
            questions = questions.filter(screen__split=split)
        return questions.select_related("screen").order_by("-pk")
    if kind == "answer":
        if reason and reason not in ANSWER_REASONS:
            raise ApplicationError(f"Unknown reason {reason!r}.", field="reason")
        answers = Answer.objects.filter(question__screen__project=project, kept=False)
        if reason:
            answers = answers.filter(drop_reason=reason)
        if split:
            answers = answers.filter(question__screen__split=split)
        return answers.select_related("question__screen", "annotator").order_by("-pk")
    raise ApplicationError(f"Unknown kind {kind!r}: use question or answer.", field="kind")


def decision_payload(obj: Model) -> dict[str, Any]:
    """The wire shape of one decision (API and pages): a dropped question or answer."""
    if isinstance(obj, Question):
        return {
            "kind": "question",
            "id": obj.pk,
            "question_id": obj.pk,
            "rico_id": obj.screen.rico_id,
            "split": obj.screen.split,
            "question": obj.text,
            "reason": obj.drop_reason,
            "reason_label": QUESTION_REASONS.get(obj.drop_reason, obj.drop_reason),
            "agreement": obj.agreement,
        }
    if not isinstance(obj, Answer):
        raise TypeError(f"not a decision: {obj!r}")
    return {
        "kind": "answer",
        "id": obj.pk,
        "question_id": obj.question_id,
        "rico_id": obj.question.screen.rico_id,
        "split": obj.question.screen.split,
        "question": obj.question.text,
        "reason": obj.drop_reason,
        "reason_label": ANSWER_REASONS.get(obj.drop_reason, obj.drop_reason),
        "verdict": obj.verdict,
        "annotator": obj.annotator.get_username() if obj.annotator else None,
    }


def answer_records(question_ids: Sequence[int], *, withdrawn_by_rule: str = "") -> dict[int, list[AnswerRecord]]:
    """Each question's answers in submission order, with their elements and annotators: two queries
    (post-processing decides on them; the quality report measures each annotator's agreement).
    Quality control's withdrawals are left out; with ``withdrawn_by_rule``, only the answers a quality
    decision of that rule withdrew (provisional work compares a redo with the work held back)."""
    answers = Answer.objects.filter(question_id__in=question_ids)
    if withdrawn_by_rule:
        answers = answers.filter(withdrawn_by__rule=withdrawn_by_rule)
    else:
        answers = answers.exclude(drop_reason__in=QUALITY_ANSWER_REASONS)
    rows = list(
        answers.order_by("question_id", "created_at", "pk").values_list(
            "pk", "question_id", "verdict", "question_text", "kept", "drop_reason", "annotator_id"
        )
    )
    elements: dict[int, list[ElementView]] = {}
    for answer_id, text, left, top, right, bottom in (
        AnswerElement.objects.filter(answer__question_id__in=question_ids)
        .order_by("answer_id", "position")
        .values_list("answer_id", "text", "left", "top", "right", "bottom")
    ):
        elements.setdefault(answer_id, []).append(ElementView(text=text, bounds=(left, top, right, bottom)))
    records: dict[int, list[AnswerRecord]] = {}
    for pk, question_id, verdict, question_text, kept, drop_reason, annotator_id in rows:
        records.setdefault(question_id, []).append(
            AnswerRecord(pk, verdict, question_text, tuple(elements.get(pk, ())), kept, drop_reason, annotator_id)
        )
    return records

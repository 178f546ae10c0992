"""Answer annotation (per question), by the answer pool, never by the question's author,
never twice by one annotator, ``answers_needed`` times (1 in train, 3 in validation/test).

Under the question's lock, live leases plus submitted answers never exceed
``answers_needed``: the queue filters on it, ``open_to`` re-counts it with a fresh
statement after the lock, and ``answers_done <= answers_needed`` is a check constraint.

Submission: the question as fixed by the answerer, a verdict, and for ``answered`` an
ordered non-empty list of elements (a VH candidate by ``vh_index`` or a drawn box in
screenshot pixels, each with a non-empty text) and the full-sentence answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.exceptions import ApplicationError, ConflictError, PermissionDeniedError
from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    Candidate,
    Membership,
    Project,
    Question,
    QuestionState,
    Stage,
    Verdict,
)

from .base import (
    FULL_ANSWER_MAX,
    StageRules,
    clean_text,
    live_q,
    question_brief,
    question_has,
    require_answer_pool,
    require_keys,
    taken_by_user_q,
)

ELEMENTS_MAX = 50
ELEMENT_KEYS = {"vh_index", "bounds", "text"}


def _clean_bounds(value: Any, *, field: str, width: int, height: int) -> list[int]:
    if not isinstance(value, list) or len(value) != 4 or not all(type(v) is int for v in value):
        raise ApplicationError("Bounds are four integers [left, top, right, bottom].", field=field)
    left, top, right, bottom = value
    if right <= left or bottom <= top:
        raise ApplicationError("The box must have a positive area (right > left, bottom > top).", field=field)
    if left < 0 or top < 0 or right > width or bottom > height:
        raise ApplicationError(f"The box must lie inside the {width}x{height} screenshot.", field=field)
    return [left, top, right, bottom]


def answer_elements_clean(*, screen_id: int, width: int, height: int, value: Any) -> list[dict[str, Any]]:
    """Ordered elements, each ``{"vh_index": int | None, "bounds": [l, t, r, b], "text": str}``.

    A candidate's bounds come from the candidate; its text defaults to the candidate's
    label (what the UI pre-fills) but must end up non-empty.
    """
    if not isinstance(value, list) or not value:
        raise ApplicationError("An answer needs at least one element (a candidate or a drawn box).", field="elements")
    if len(value) > ELEMENTS_MAX:
        raise ApplicationError(f"At most {ELEMENTS_MAX} elements.", field="elements")
    wanted = [item["vh_index"] for item in value if isinstance(item, dict) and type(item.get("vh_index")) is int]
    candidates = {c.vh_index: c for c in Candidate.objects.filter(screen_id=screen_id, vh_index__in=wanted)}
    elements: list[dict[str, Any]] = []
    seen: set[int] = set()
    for i, item in enumerate(value):
        field = f"elements[{i}]"
        if not isinstance(item, dict):
            raise ApplicationError("Each element is an object.", field=field)
        unknown = sorted(set(item) - ELEMENT_KEYS)
        if unknown:
            raise ApplicationError(f"Unknown field {unknown[0]!r}.", field=f"{field}.{unknown[0]}")
        has_vh, has_box = item.get("vh_index") is not None, item.get("bounds") is not None
        if has_vh == has_box:
            raise ApplicationError("Give either a vh_index (a candidate) or bounds (a drawn box).", field=field)
        if has_vh:
            vh_index = item["vh_index"]
            if type(vh_index) is not int or vh_index not in candidates:
                raise ApplicationError(
                    "No candidate element with this vh_index on this screen.", field=f"{field}.vh_index"
                )
            if vh_index in seen:
                raise ApplicationError("This candidate is already in the answer.", field=f"{field}.vh_index")
            seen.add(vh_index)
            candidate = candidates[vh_index]
            text = item.get("text")
            if text is None:
                text = candidate.label
            elements.append(
                {
                    "vh_index": vh_index,
                    "bounds": candidate.bounds,
                    "text": clean_text(text, field=f"{field}.text"),
                }
            )
        else:
            bounds = _clean_bounds(item["bounds"], field=f"{field}.bounds", width=width, height=height)
            elements.append(
                {"vh_index": None, "bounds": bounds, "text": clean_text(item.get("text"), field=f"{field}.text")}
            )
    return elements


class AnswersRules(StageRules):
    stage = Stage.ANSWERS
    label = "Answers"
    unit = "question"

    def check_access(self, *, user: Any, membership: Membership | None) -> None:
        require_answer_pool(user=user, membership=membership)

    def queue_shape(self, *, project: Project) -> tuple[Any, ...] | None:
        return ()  # the queue depends on the project, user and time only

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        live = (
            Assignment.objects.filter(live_q(now), question=OuterRef("pk"), stage=self.stage)
            .order_by()
            .values("question")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return (
            Question.objects.filter(screen__project=project, state=QuestionState.ANSWERING)
            .exclude(author=user)
            .exclude(question_has(taken_by_user_q(user)))
            .alias(live=Coalesce(Subquery(live, output_field=IntegerField()), Value(0)))
            .filter(answers_done__lt=F("answers_needed") - F("live"))
            .order_by("pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        question: Question = unit
        if question.state != QuestionState.ANSWERING or question.author_id == user.pk:
            return False
        others = Assignment.objects.filter(question=question, stage=self.stage)
        if own is not None:
            others = others.exclude(pk=own.pk)
        if others.filter(annotator=user, status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED]).exists():
            return False
        return question.answers_done + others.filter(live_q(now)).count() < question.answers_needed

    def clean(self, *, assignment: Assignment, data: dict[str, Any]) -> dict[str, Any]:
        require_keys(data, {"question", "verdict", "elements", "full_answer"})
        question_text = clean_text(data.get("question"), field="question")
        verdict = data.get("verdict")
        if verdict not in Verdict.values:
            raise ApplicationError(f"The verdict is one of {', '.join(Verdict.values)}.", field="verdict")
        screen = assignment.screen
        if verdict == Verdict.ANSWERED:
            elements = answer_elements_clean(
                screen_id=screen.pk, width=screen.width, height=screen.height, value=data.get("elements")
            )
            full_answer = clean_text(data.get("full_answer"), field="full_answer", max_length=FULL_ANSWER_MAX)
        else:
            if data.get("elements"):
                raise ApplicationError(f"A question marked {verdict} has no elements.", field="elements")
            elements = []
            full_answer = clean_text(
                data.get("full_answer"), field="full_answer", max_length=FULL_ANSWER_MAX, required=False
            )
        return {"question": question_text, "verdict": verdict, "elements": elements, "full_answer": full_answer}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        question: Question = unit
        if question.author_id == assignment.annotator_id:
            raise PermissionDeniedError("You wrote this question; somebody else answers it.")
        if question.state != QuestionState.ANSWERING or question.answers_done >= question.answers_needed:
            raise ConflictError("This question already has all its answers.")
        answer = Answer.objects.create(
            assignment=assignment,
            question=question,
            annotator_id=assignment.annotator_id,
            verdict=cleaned["verdict"],
            question_text=cleaned["question"],
            full_answer=cleaned["full_answer"],
        )
        AnswerElement.objects.bulk_create(
            [
                AnswerElement(
                    answer=answer,
                    position=i,
                    vh_index=e["vh_index"],
                    left=e["bounds"][0],
                    top=e["bounds"][1],
                    right=e["bounds"][2],
                    bottom=e["bounds"][3],
                    text=e["text"],
                )
                for i, e in enumerate(cleaned["elements"])
            ]
        )
        question.answers_done += 1
        if question.answers_done >= question.answers_needed:
            question.state = QuestionState.ANSWERED
        question.save(update_fields=["answers_done", "state"])

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        assert assignment.question is not None
        return {"question": question_brief(assignment.question)}

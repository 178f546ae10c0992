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

import re
from collections import Counter
from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, F, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Greatest
from django.http import QueryDict
from rest_framework import serializers

from annotation.exceptions import ConflictError, PermissionDeniedError
from annotation.hostile import HostileInputError, json_loads_checked
from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    Candidate,
    Membership,
    Project,
    QualityEvent,
    Question,
    QuestionState,
    Stage,
    SuggestionUse,
    Verdict,
)
from annotation.permissions import require_answer_pool
from pipeline.assist.service import suggestion_for
from pipeline.decisions.agreement import AnswerView, ElementView, answers_agree
from pipeline.decisions.decide import (
    PREDECIDED_QUESTION_REASONS,
    QUALITY_ANSWER_REASONS,
    REASON_REVIEW_REJECTED,
    REASON_WITHDRAWN,
    agreement_settings_for,
)

from .base import StageDefinition, crowd_share, form_refuse, form_text, live_q, question_brief, taken_by_user_q
from .units import QUESTION
from .wire import (
    FULL_ANSWER_MAX,
    TEXT_MAX,
    AssignmentPayloadSerializer,
    QuestionBriefSerializer,
    StrictSerializer,
    TextField,
    WholeNumberField,
    stage_name_field,
)

ELEMENTS_MAX = 50
# The page's actions and the verdicts they submit.
ACTIONS = {"answer": Verdict.ANSWERED, "invalid": Verdict.INVALID, "not_answerable": Verdict.NOT_ANSWERABLE}
QUOTED = re.compile(r'"([^"]+)"')
# The scripted crowd's questions that read two ways. Three careful answerers each pick either
# reading, so they all agree on a quarter of these, and the lenient agreement rule counts a few
# more as agreeing: measured, ~0.65 of this share ends "two agree" (devtools/bench/bench_quality.py,
# with QC only careful answers remain). 3% puts careful crowds near the paper's 2.1% (97.9% all agree).
AMBIGUOUS_SHARE = 0.03
# The share of questions a scripted answerer edits (the crowd docs: "~20% of questions").
EDIT_SHARE = 0.2


def answers_withdraw(
    answers: QuerySet[Answer], *, reason: str, requeue: bool, event: QualityEvent | None = None
) -> int:
    """Take answers out of the release (``reason``: a quality-control reason, so post-processing never
    counts them again; ``event``: the quality decision, so a lead overturning it brings them back);
    ``requeue``: their questions wait for one more answer each, from another annotator (the
    withdrawn answer's annotator never gets the question again)."""
    rows = list(
        answers.filter(kept=True).exclude(drop_reason__in=QUALITY_ANSWER_REASONS).values_list("pk", "question_id")
    )
    if not rows:
        return 0
    Answer.objects.filter(pk__in=[pk for pk, _ in rows]).update(kept=False, drop_reason=reason, withdrawn_by=event)
    if requeue:
        for question_id, n in Counter(question for _, question in rows).items():
            Question.objects.filter(pk=question_id).exclude(drop_reason__in=PREDECIDED_QUESTION_REASONS).update(
                answers_done=Greatest(F("answers_done") - n, Value(0)), state=QuestionState.ANSWERING
            )
    return len(rows)


def answers_restore(answers: QuerySet[Answer], *, requeued: bool, now: datetime) -> dict[str, int]:
    """Bring withdrawn ``answers`` back (a lead overturned the decision, or the review that rejected
    them was withdrawn). ``requeued``: their questions were asked of others again, so an answer
    comes back only into a free place (answers so far plus others' live leases under the number
    needed; else another annotator redid it: ``redone``). Not requeued: the answer comes back and
    a question post-processing already decided waits to be decided again. An answer whose question
    is dropped before post-processing (its app, quality control) stays out (``kept_out``). Locks the
    questions in id order."""
    rows = list(
        answers.filter(kept=False, drop_reason__in=QUALITY_ANSWER_REASONS)
        .order_by("pk")
        .values_list("pk", "question_id")
    )
    if not rows:
        return {"restored": 0, "redone": 0, "kept_out": 0}
    question_ids = sorted({q for _, q in rows})
    questions = {q.pk: q for q in Question.objects.select_for_update().filter(pk__in=question_ids).order_by("pk")}
    live = dict(
        Assignment.objects.filter(live_q(now), question_id__in=question_ids, stage=Stage.ANSWERS)
        .values_list("question_id")
        .annotate(n=Count("pk"))
        .values_list("question_id", "n")
    )
    back: list[int] = []
    counts = {"redone": 0, "kept_out": 0}
    changed: set[int] = set()
    for pk, question_id in rows:
        question = questions[question_id]
        if question.state == QuestionState.DROPPED and question.drop_reason in PREDECIDED_QUESTION_REASONS:
            counts["kept_out"] += 1
            continue
        if requeued:
            if question.answers_done + live.get(question_id, 0) >= question.answers_needed:
                counts["redone"] += 1
                continue
            question.answers_done += 1
            if question.answers_done >= question.answers_needed:
                question.state = QuestionState.ANSWERED
        elif question.state in (QuestionState.KEPT, QuestionState.DROPPED):
            question.state, question.drop_reason = QuestionState.ANSWERED, ""  # decided again
        back.append(pk)
        changed.add(question_id)
    Answer.objects.filter(pk__in=back).update(kept=True, drop_reason="", withdrawn_by=None)
    for question_id in sorted(changed):
        q = questions[question_id]
        Question.objects.filter(pk=question_id).update(
            answers_done=q.answers_done, state=q.state, drop_reason=q.drop_reason
        )
    return {"restored": len(back), **counts}


class BoxField(serializers.ListField):
    """``[left, top, right, bottom]``: four JSON integers, in screenshot pixels."""

    default_error_messages = {"box": "Bounds are four integers [left, top, right, bottom]."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=WholeNumberField(), min_length=4, max_length=4, **kwargs)

    def to_internal_value(self, data: Any) -> list[int]:
        if not isinstance(data, list) or len(data) != 4 or not all(type(v) is int for v in data):
            self.fail("box")
        return list(data)


class AnswerElementSerializer(StrictSerializer):
    vh_index = WholeNumberField(required=False, allow_null=True, help_text="a candidate (give this or bounds)")
    bounds = BoxField(required=False, allow_null=True, help_text="a drawn box [l, t, r, b] in screenshot pixels")
    text = TextField(
        required=False, allow_null=True, help_text="non-empty; defaults to the candidate's text for a vh_index"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("vh_index") is None) == (attrs.get("bounds") is None):
            raise serializers.ValidationError("Give either a vh_index (a candidate) or bounds (a drawn box).")
        return attrs


class AnswersSubmitSerializer(StrictSerializer):
    question = TextField(help_text="the question as fixed by the answerer")
    verdict = serializers.ChoiceField(
        choices=Verdict.values, error_messages={"invalid_choice": f"The verdict is one of {', '.join(Verdict.values)}."}
    )
    elements = AnswerElementSerializer(  # type: ignore[call-arg]  # many=True takes the list's arguments
        many=True,
        required=False,
        max_length=ELEMENTS_MAX,
        error_messages={"max_length": f"At most {ELEMENTS_MAX} elements."},
        help_text="ordered; non-empty for answered",
    )
    # Missing, null or blank: one message, the one that says what to do ("Write the answer ...").
    full_answer = TextField(
        max_length=FULL_ANSWER_MAX, required=False, allow_blank=True, allow_null=True, help_text="required for answered"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        verdict = attrs["verdict"]
        elements = attrs.get("elements") or []
        if verdict != Verdict.ANSWERED:
            if elements:
                raise serializers.ValidationError({"elements": f"A question marked {verdict} has no elements."})
            return {**attrs, "elements": [], "full_answer": attrs.get("full_answer") or ""}
        if not elements:
            raise serializers.ValidationError(
                {"elements": "An answer needs at least one element (a candidate or a drawn box)."}
            )
        if not attrs.get("full_answer"):
            raise serializers.ValidationError({"full_answer": "Write the answer as a full sentence."})
        return {**attrs, "elements": self._elements(elements)}

    def _elements(self, elements: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each ``{"vh_index": int | None, "bounds": [l, t, r, b], "text": str}``, in order: a
        candidate's bounds come from the candidate and its text defaults to the candidate's label
        (what the page pre-fills); a drawn box lies inside the screenshot with a positive area."""
        screen = self.context["assignment"].screen
        wanted = [e["vh_index"] for e in elements if e.get("vh_index") is not None]
        candidates = {c.vh_index: c for c in Candidate.objects.filter(screen_id=screen.pk, vh_index__in=wanted)}
        cleaned: list[dict[str, Any]] = []
        seen: set[int] = set()
        for i, element in enumerate(elements):
            vh_index, text = element.get("vh_index"), element.get("text")

            def refuse(field: str, message: str, at: int = i) -> serializers.ValidationError:
                return serializers.ValidationError({"elements": {str(at): {field: [message]}}})

            if vh_index is not None:
                if vh_index not in candidates:
                    raise refuse("vh_index", "No candidate element with this vh_index on this screen.")
                if vh_index in seen:
                    raise refuse("vh_index", "This candidate is already in the answer.")
                seen.add(vh_index)
                bounds = candidates[vh_index].bounds
                text = " ".join(candidates[vh_index].label.split()) if text is None else text
            else:
                bounds = element["bounds"]
                left, top, right, bottom = bounds
                if right <= left or bottom <= top:
                    raise refuse("bounds", "The box must have a positive area (right > left, bottom > top).")
                if left < 0 or top < 0 or right > screen.width or bottom > screen.height:
                    raise refuse("bounds", f"The box must lie inside the {screen.width}x{screen.height} screenshot.")
            if not text:
                raise refuse("text", "This may not be empty." if text == "" else "This must be text.")
            cleaned.append({"vh_index": vh_index, "bounds": list(bounds), "text": text})
        return cleaned


class SuggestedElementSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(allow_null=True, help_text="a candidate, or null for a box")
    bounds = serializers.ListField(child=serializers.IntegerField(), help_text="[l, t, r, b] in screenshot pixels")
    text = serializers.CharField()
    score = serializers.FloatField()


class SuggestionSerializer(serializers.Serializer):
    model_version = serializers.CharField(allow_blank=True)
    elements = SuggestedElementSerializer(many=True, help_text="ranked, best first: the first is the pre-annotation")


class AnswersPayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.ANSWERS)
    question = QuestionBriefSerializer(help_text="the question to answer")
    suggestion = SuggestionSerializer(
        allow_null=True, help_text="the model's suggestion (docs/assist.md); null: none. Never an answer by itself."
    )


class Answers(StageDefinition):
    name = Stage.ANSWERS
    label = "Answers"
    short_label = "Answers"
    unit = QUESTION
    submit_serializer = AnswersSubmitSerializer
    payload_serializer = AnswersPayloadSerializer
    template = "frontend/workspace/answers.html"
    controller = "answers"
    viewer = {"labels": False, "drag_pans": False, "boxes": True}
    has_gold = True
    # "not answerable" every time is right on every such gold item: each verdict alike in a
    # qualification set (StageDefinition.gold_classes)
    gold_classes = tuple({"verdict": verdict} for verdict in Verdict.values)
    review_reasons = {
        "wrong-element": "An element does not answer the question",
        "missing-element": "An element of the answer is missing",
        "order": "The elements are not in order (relevance, else reading order by group)",
        "text": "An element's text does not match the screen",
        "box": "A drawn box does not fit its element",
        "full-answer": "The full answer is wrong or not a sentence",
        "verdict": "It should have been answered, or marked invalid / not answerable",
        "question-edit": "The question's fix changed its intent",
    }
    messages = {
        "question": "The question cannot be empty (fix its typos, keep its intent).",
        "elements": "Select or draw at least one element (or mark the question).",
        "element_text": "Element {n} has no text: type what it shows.",
        "full_answer": "Write the answer as a full sentence.",
        "unreadable": "The element list could not be read; reload the page (your draft is kept).",
    }

    def check_access(self, *, user: Any, membership: Membership | None) -> None:
        require_answer_pool(user=user, membership=membership)

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        live = (
            self.unit.assignments(self.name, live_q(now))
            .order_by()
            .values("question")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return (
            Question.objects.filter(screen__project=project, state=QuestionState.ANSWERING)
            .exclude(author=user)
            .exclude(self.unit.has(self.name, taken_by_user_q(user)))
            .alias(live=Coalesce(Subquery(live, output_field=IntegerField()), Value(0)))
            .filter(answers_done__lt=F("answers_needed") - F("live"))
            .order_by("queue_key", "pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        question: Question = unit
        if question.state != QuestionState.ANSWERING or question.author_id == user.pk:
            return False
        others = Assignment.objects.filter(question=question, stage=self.name)
        if own is not None:
            others = others.exclude(pk=own.pk)
        if others.filter(annotator=user, status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED]).exists():
            return False
        return question.answers_done + others.filter(live_q(now)).count() < question.answers_needed

    def capacity(self, *, project: Project, unit_answers_needed: int | None) -> int:
        return max(1, unit_answers_needed or 0)

    def limits(self, *, project: Project) -> dict[str, int]:
        return {"text_max": TEXT_MAX, "full_answer_max": FULL_ANSWER_MAX, "elements_max": ELEMENTS_MAX}

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
        return {"question": question_brief(assignment.question), "suggestion": self.suggestion(assignment=assignment)}

    # --- model assistance (docs/assist.md) ----------------------------------------------------

    def suggestion(self, *, assignment: Assignment) -> dict[str, Any] | None:
        # Control items read their suggestion exactly as real work does (no tell).
        assert assignment.question_id is not None
        return suggestion_for(project=assignment.project, question_id=assignment.question_id, assignment=assignment)

    def suggestion_use(self, *, suggestion: dict[str, Any] | None, cleaned: dict[str, Any]) -> str:
        """``accepted``: answered with exactly the suggested (first-ranked) element, its text unchanged;
        ``edited``: a suggestion was shown and the answer differs; ``none``: none was shown."""
        if not suggestion or not suggestion.get("elements"):
            return SuggestionUse.NONE
        elements = cleaned.get("elements") or []
        answered = cleaned.get("verdict") == Verdict.ANSWERED and len(elements) == 1
        if answered and _same_element(elements[0], suggestion["elements"][0]):
            return SuggestionUse.ACCEPTED
        return SuggestionUse.EDITED

    def suggestion_kept(self, *, assignment: Assignment, use: str) -> None:
        """On the answer (the release manifest counts kept answers by it)."""
        Answer.objects.filter(assignment=assignment).update(suggestion_use=use)
        cached = assignment._state.fields_cache.get("answer")  # the instance ``apply`` just created
        if cached is not None:
            cached.suggestion_use = use

    def suggestion_submission(self, *, suggestion: dict[str, Any], cleaned: dict[str, Any]) -> dict[str, Any]:
        """The first-ranked element as an answer."""
        top = suggestion["elements"][0]
        element = {"vh_index": top.get("vh_index"), "bounds": list(top["bounds"]), "text": top["text"]}
        return {"verdict": Verdict.ANSWERED, "elements": [element], "question": cleaned.get("question", "")}

    # --- quality control -------------------------------------------------------------------

    def gold_answer(self, *, submission: dict[str, Any]) -> dict[str, Any]:
        return {
            "verdict": submission["verdict"],
            "elements": [dict(e) for e in submission.get("elements", [])],
            "question": submission.get("question", ""),
        }

    def gold_unit_waiting(self) -> Exists:
        # An EXISTS, not a join: the planner then reads only the waiting questions (by their state), not
        # every question of the database, for the gold page's class balance and the control draws
        return Exists(Question.objects.filter(pk=OuterRef("question_id"), state=QuestionState.ANSWERING))

    def gold_score(self, *, given: dict[str, Any], gold: dict[str, Any], project: Project) -> tuple[bool, str]:
        """The same verdict; for ``answered``, the elements agree as two answers of a question agree in
        post-processing (the project's agreement rule, boxes when the project compares them)."""
        if given.get("verdict") != gold.get("verdict"):
            return False, f"The verdict was {given.get('verdict')}, the right one is {gold.get('verdict')}."
        if gold.get("verdict") != Verdict.ANSWERED:
            return True, ""

        def view(answer: dict[str, Any]) -> AnswerView:
            elements = tuple(ElementView(text=e["text"], bounds=tuple(e["bounds"])) for e in answer.get("elements", []))
            return AnswerView(verdict=Verdict.ANSWERED, elements=elements)

        if answers_agree(view(given), view(gold), settings=agreement_settings_for(project)):
            return True, ""
        return False, "The elements do not agree with the right answer (texts, or boxes where they are compared)."

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        """The answer leaves the release and the question waits for another answerer."""
        answers_withdraw(Answer.objects.filter(assignment=reviewed), reason=REASON_REVIEW_REJECTED, requeue=True)

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        rejected = Answer.objects.filter(assignment=reviewed, drop_reason=REASON_REVIEW_REJECTED)
        return answers_restore(rejected, requeued=True, now=now)

    def withdraw(
        self,
        *,
        project: Project,
        user: Any,
        requeue: bool,
        now: datetime,
        event: QualityEvent | None = None,
        assignments: Collection[int] | None = None,
    ) -> int:
        mine = Answer.objects.filter(question__screen__project=project, annotator=user)
        if assignments is not None:
            mine = mine.filter(assignment_id__in=list(assignments))
        return answers_withdraw(mine, reason=REASON_WITHDRAWN, requeue=requeue, event=event)

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        mine = Answer.objects.filter(question__screen__project=project, annotator=user, withdrawn_by=event)
        requeued = (event.figures or {}).get("paused_work", "requeue") == "requeue"
        return answers_restore(mine, requeued=requeued, now=now)

    # --- the page ----------------------------------------------------------------------------

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        """The model's suggestion (docs/assist.md), shown the same way on control items."""
        return {"suggestion": payload.get("suggestion")}

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        """``action`` is ``answer`` (default), ``invalid`` or ``not_answerable``; the element list
        is the hidden JSON field the box editor keeps."""
        verdict = ACTIONS.get(post.get("action") or "answer")
        if verdict is None:
            raise form_refuse("Unknown action.", field="action")
        question = form_text(post, "question")
        if not question:
            raise form_refuse(self.messages["question"], field="question")
        full_answer = form_text(post, "full_answer")
        if verdict != Verdict.ANSWERED:
            return {"question": question, "verdict": verdict, "elements": [], "full_answer": full_answer}
        elements = self._posted_elements(post)
        if not elements:
            raise form_refuse(self.messages["elements"], field="elements")
        for n, element in enumerate(elements, 1):
            if not isinstance(element, dict) or not str(element.get("text") or "").strip():
                raise form_refuse(self.messages["element_text"].format(n=n), field="elements")
        if not full_answer:
            raise form_refuse(self.messages["full_answer"], field="full_answer")
        return {"question": question, "verdict": verdict, "elements": elements, "full_answer": full_answer}

    def _posted_elements(self, post: QueryDict) -> list[Any]:
        raw = post.get("elements") or ""
        if not raw.strip():
            return []
        try:
            elements = json_loads_checked(raw, field="elements")
        except HostileInputError:
            raise
        except ValueError as exc:
            raise form_refuse(self.messages["unreadable"], field="elements") from exc
        if not isinstance(elements, list):
            raise form_refuse(self.messages["unreadable"], field="elements")
        return [_posted_element(e) for e in elements]

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        try:
            elements = json_loads_checked(post.get("elements") or "[]", field="elements")
        except (ValueError, HostileInputError):
            elements = []
        return {
            "question": post.get("question", ""),
            "full_answer": post.get("full_answer", ""),
            "elements": elements if isinstance(elements, list) else [],
        }

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        if isinstance(draft.get("question"), str) and draft["question"].strip():
            lines.append(("Question", draft["question"]))
        for i, element in enumerate(draft.get("elements") or []):
            if isinstance(element, dict) and isinstance(element.get("text"), str):
                where = (
                    f"VH #{element['vh_index']}"
                    if element.get("vh_index") is not None
                    else f"box {element.get('bounds')}"
                )
                lines.append((f"Element {i + 1} ({where})", element["text"]))
        if isinstance(draft.get("full_answer"), str) and draft["full_answer"].strip():
            lines.append(("Full answer", draft["full_answer"]))
        return lines

    # --- progress and crowd ------------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        return questions.get(QuestionState.DRAFTING, 0) + questions.get(QuestionState.ANSWERING, 0)

    def crowd_gold_fit(self, *, payload: dict[str, Any]) -> bool:
        """A lead makes no gold of a question that reads two ways."""
        return not _crowd_ambiguous(screen=payload["screen"], question=payload["question"]["text"])

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        """Find the quoted text among the candidates, then select the candidate (half the time)
        or draw a box around it, sometimes add a neighbour; a question that quotes nothing is
        not answerable; the actor's ``invalid`` / ``unanswerable`` shares (default 3% / 2%) are
        marked so by mistake, ``wrong_element`` pick another element; for ~15% of questions (the
        same for every answerer) the text read together with the quoted one belongs to the answer,
        and each answerer adds it ``pair`` of the time (default 70%); ``extra`` (10%) add a
        neighbour; ``AMBIGUOUS_SHARE`` (3%) of questions read two ways (either of two elements); ~20% of questions
        (the same for every answerer, ``EDIT_SHARE``) need an edit (``crowd_question_edit``), which
        each answerer makes ``edit`` of the time (default 90%; a spammer never). A shown suggestion is
        submitted unchanged ``accepts_suggestions`` of the time (default never; the ``stamper`` profile always)."""
        screen, question = payload["screen"], payload["question"]["text"]
        suggestion = payload.get("suggestion")
        if suggestion and actor.rng.random() < getattr(actor, "accepts_suggestions", 0.0):
            return _suggestion_accepted(question=question, suggestion=suggestion)
        edits = actor.rng.random() < getattr(actor, "edit", 0.9)
        if getattr(actor, "spam", False):  # a spammer: any verdict, any element
            return _spam_answer(question=question, screen=screen, rng=actor.rng)
        needs_edit = crowd_share(f"edit:{screen.get('rico_id', '')}:{question}") < EDIT_SHARE
        fixed = crowd_question_edit(question) if edits and needs_edit else question
        if actor.rng.random() < getattr(actor, "invalid", 0.03):
            return {"question": fixed, "verdict": "invalid", "elements": [], "full_answer": ""}
        quoted = QUOTED.search(question)
        matches = [c for c in screen["candidates"] if quoted and c["text"][:40].replace('"', "'") == quoted.group(1)]
        if not matches or actor.rng.random() < getattr(actor, "unanswerable", 0.02):
            return {"question": fixed, "verdict": "not_answerable", "elements": [], "full_answer": ""}
        chosen = [matches[0]]
        if _crowd_ambiguous(screen=screen, question=question):  # two readings: either element
            neighbours = [c for c in screen["candidates"] if c["text"] and c["text"] != matches[0]["text"]]
            if neighbours and actor.rng.random() < 0.5:
                chosen = [neighbours[0]]
        elif actor.rng.random() < getattr(actor, "wrong_element", 0.02):  # another element than the one asked about
            wrong = [c for c in screen["candidates"] if c["text"] and c["text"] != matches[0]["text"]]
            chosen = [actor.rng.choice(wrong)] if wrong else chosen
        second = _second_element(question, matches[0], screen)
        if second is not None and second not in chosen and actor.rng.random() < getattr(actor, "pair", 0.7):
            chosen.append(second)
        others = [c for c in screen["candidates"] if c not in chosen and c["text"]]
        if others and actor.rng.random() < getattr(actor, "extra", 0.1):
            chosen.append(actor.rng.choice(others))
        elements = [_crowd_element(c, screen, actor) for c in chosen]
        return {
            "question": fixed,
            "verdict": "answered",
            "elements": elements,
            "full_answer": f"It says {', '.join(e['text'] for e in elements)}.",
        }


# The scripted crowd's question edits: fixes first (every one that applies), else a rewording.
# Quoted screen text is never touched.
_CONTRACTIONS = {
    "what's": "what is",
    "who's": "who is",
    "where's": "where is",
    "how's": "how is",
    "it's": "it is",
    "that's": "that is",
    "isn't": "is not",
    "aren't": "are not",
    "doesn't": "does not",
    "don't": "do not",
    "can't": "cannot",
}
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(c) for c in _CONTRACTIONS) + r")\b", re.IGNORECASE)
# A question with nothing to fix is reworded: its first word found here becomes the other.
_REWORDINGS = {
    "say": "read",
    "shown": "displayed",
    "item": "element",
    "written": "printed",
    "app": "application",
    "phone": "telephone",
    "have": "contain",
    "change": "update",
    "set": "configured",
}
_REWORDING = re.compile(r"\b(" + "|".join(_REWORDINGS) + r")\b")
_QUOTED_PARTS = re.compile(r'("[^"]*")')


def _expand(match: re.Match[str]) -> str:
    word = match.group(0)
    full = _CONTRACTIONS[word.lower()]
    return full[0].upper() + full[1:] if word[0].isupper() else full


def crowd_question_edit(question: str) -> str:
    """What a scripted answerer makes of a question that needs an edit: contractions expanded
    ("What's" → "What is"), a missing question mark added, the first letter capitalised; a question
    with nothing to fix is reworded (``What does "X" say?`` → ``What does "X" read?``). Text in
    double quotes (the screen's) stays as it is. Returns ``question`` unchanged only when no rule
    applies (an empty text, or a clean one without a word of ``_REWORDINGS``)."""
    parts = _QUOTED_PARTS.split(question.strip())
    fixed = "".join(p if i % 2 else _CONTRACTION.sub(_expand, p) for i, p in enumerate(parts))
    if fixed and not fixed.endswith("?"):
        fixed += "?"
    fixed = fixed[:1].upper() + fixed[1:]
    if fixed != question:
        return fixed
    for i, part in enumerate(parts):
        if i % 2 == 0 and _REWORDING.search(part):
            parts[i] = _REWORDING.sub(lambda m: _REWORDINGS[m.group(0)], part, count=1)
            return "".join(parts)
    return question


def _crowd_ambiguous(*, screen: dict[str, Any], question: str) -> bool:
    """``AMBIGUOUS_SHARE`` of questions (the same for every answerer) read two ways: careful answerers
    pick either of two elements, so three answers often do not all agree (the paper: ~2.1%)."""
    return crowd_share(f"ambiguous:{screen['rico_id']}:{question}") < AMBIGUOUS_SHARE


def _same_element(given: dict[str, Any], suggested: dict[str, Any]) -> bool:
    """The suggested element, given back: the same candidate (or the same drawn box), the same text."""
    if suggested.get("vh_index") is not None:
        same_place = given.get("vh_index") == suggested["vh_index"]
    else:
        same_place = given.get("vh_index") is None and list(given.get("bounds") or []) == suggested["bounds"]
    return same_place and " ".join(str(given.get("text") or "").split()) == suggested["text"]


def _suggestion_accepted(*, question: str, suggestion: dict[str, Any]) -> dict[str, Any]:
    """A scripted annotator who submits the model's suggestion unchanged (docs/assist.md)."""
    top = suggestion["elements"][0]
    if top.get("vh_index") is not None:
        element = {"vh_index": top["vh_index"], "text": top["text"]}
    else:
        element = {"bounds": list(top["bounds"]), "text": top["text"]}
    return {"question": question, "verdict": "answered", "elements": [element], "full_answer": f"It is {top['text']}."}


def _spam_answer(*, question: str, screen: dict[str, Any], rng: Any) -> dict[str, Any]:
    texts = [c for c in screen["candidates"] if c["text"]]
    verdict = rng.choice(["answered", "answered", "not_answerable", "invalid"]) if texts else "not_answerable"
    if verdict != "answered":
        return {"question": question, "verdict": verdict, "elements": [], "full_answer": ""}
    pick = rng.choice(texts)
    return {
        "question": question,
        "verdict": "answered",
        "elements": [{"vh_index": pick["vh_index"], "text": pick["text"]}],
        "full_answer": pick["text"],
    }


def _second_element(question: str, first: dict[str, Any], screen: dict[str, Any]) -> dict[str, Any] | None:
    """For ~15% of questions (the same for every answerer), the text read together with ``first``:
    the next candidate with a different text, in VH order; else None."""
    if crowd_share(f"pair:{screen['rico_id']}:{question}") >= 0.15:
        return None
    candidates = screen["candidates"]
    after = candidates[candidates.index(first) + 1 :]
    return next((c for c in after if c["text"].strip() and c["text"] != first["text"]), None)


def _posted_element(element: Any) -> Any:
    """The box editor's element as the engine takes it: a candidate by ``vh_index`` (the page
    also keeps its bounds, and ``-1`` for "none"), or a drawn box whose decimal coordinates
    mean whole pixels. Anything else goes on as it is, for the engine to refuse by name."""
    if not isinstance(element, dict):
        return element
    text = element.get("text")
    text = text.strip() if isinstance(text, str) else text
    vh_index = element.get("vh_index")
    if vh_index is not None and vh_index != -1:
        return {"vh_index": vh_index, "text": text}
    bounds = element.get("bounds")
    if isinstance(bounds, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in bounds):
        bounds = [round(v) for v in bounds]
    return {"bounds": bounds, "text": text}


def _crowd_element(candidate: dict[str, Any], screen: dict[str, Any], actor: Any) -> dict[str, Any]:
    if actor.rng.random() < 0.5:
        return {"vh_index": candidate["vh_index"], "text": candidate["text"]}
    left, top, right, bottom = candidate["bounds"]
    jitter = [actor.rng.randint(-3, 3) for _ in range(4)]
    box = [
        max(0, left + jitter[0]),
        max(0, top + jitter[1]),
        min(screen["width"], right + jitter[2]),
        min(screen["height"], bottom + jitter[3]),
    ]
    if box[2] <= box[0] or box[3] <= box[1]:
        box = [left, top, right, bottom]
    return {"bounds": box, "text": candidate["text"]}

"""Not-answerable questions (per sampled screen).

A lead starts the stage with a sample size; the default is what reaches the project's
``not_answerable_target`` share (10%) of questions, at most 5,000 (the paper's sample):

    n = ceil((target * Q - NA) / (1 - target)) - pending

where ``Q`` counts the project's questions that are not dropped, ``NA`` those written in
this stage, and ``pending`` the sampled screens whose question is not written yet (so a
second start does not over-sample). Screens are drawn deterministically among screens in
``answering`` (seeded hash of project and RICO id, the split's hash with another salt).
One writer adds one plausible question the screen cannot answer; it goes straight to
``answering`` with the screen's split's number of answers, like any other question.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.http import QueryDict
from rest_framework import serializers

from annotation.exceptions import ApplicationError, ConflictError
from annotation.lock_objects import project_lock
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Project,
    QualityEvent,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
    Split,
    Stage,
)
from pipeline.decisions.decide import REASON_REVIEW_REJECTED

from .base import (
    StageDefinition,
    form_refuse,
    form_text,
    live_q,
    others_live_lease_exists,
    question_brief,
    screen_questions,
    taken_by_user_q,
)
from .questions import (
    author_questions_withdrawable,
    author_withdrawal_reason,
    questions_create,
    questions_drop,
    questions_restore,
)
from .split import split_bucket
from .units import SCREEN
from .wire import AssignmentPayloadSerializer, QuestionBriefSerializer, StrictSerializer, TextField, stage_name_field

SAMPLE_MAX = 5000


class NotAnswerableSubmitSerializer(StrictSerializer):
    question = TextField(help_text="a plausible question this screen cannot answer")

    def validate_question(self, text: str) -> str:
        if any(q.casefold() == text.casefold() for q in self.context.get("asked", [])):
            raise serializers.ValidationError("This question is already asked on this screen.")
        return text


class NotAnswerablePayloadSerializer(AssignmentPayloadSerializer):
    stage = stage_name_field(Stage.NOT_ANSWERABLE)
    previous_questions = QuestionBriefSerializer(many=True, help_text="the screen's questions so far")


class NotAnswerable(StageDefinition):
    name = Stage.NOT_ANSWERABLE
    label = "Not-answerable questions"
    short_label = "Not-answ."
    unit = SCREEN
    submit_serializer = NotAnswerableSubmitSerializer
    payload_serializer = NotAnswerablePayloadSerializer
    template = "frontend/workspace/not_answerable.html"
    controller = "not_answerable"
    messages = {"empty": "Write one question that this screen cannot answer."}
    review_reasons = {
        "answerable": "The screen answers it",
        "not-plausible": "Not a plausible question for this app",
        "duplicate": "Repeats a question of the screen",
    }

    def queue(self, *, project: Project, user: Any, now: datetime) -> QuerySet[Any]:
        return (
            Screen.objects.filter(project=project, state=ScreenState.ANSWERING, not_answerable_sampled=True)
            .exclude(self.unit.has(self.name, live_q(now)))
            .exclude(self.unit.has(self.name, taken_by_user_q(user)))
            .exclude(self.unit.has(self.name, _submitted()))
            .order_by("queue_key", "pk")
        )

    def open_to(self, *, unit: Any, user: Any, now: datetime, own: Assignment | None = None) -> bool:
        screen: Screen = unit
        if screen.state != ScreenState.ANSWERING or not screen.not_answerable_sampled:
            return False
        if Assignment.objects.filter(screen=screen, stage=self.name, status=AssignmentStatus.SUBMITTED).exists():
            return False
        return not others_live_lease_exists(stage=self.name, now=now, own=own, screen=screen)

    def submit_context(self, *, assignment: Assignment) -> dict[str, Any]:
        asked = [q.text for q in screen_questions(assignment.screen, not_from=assignment)]
        return {**super().submit_context(assignment=assignment), "asked": asked}

    def apply(self, *, assignment: Assignment, unit: Any, cleaned: dict[str, Any], now: datetime) -> None:
        screen: Screen = unit
        if screen.state != ScreenState.ANSWERING or not screen.not_answerable_sampled:
            raise ConflictError("This screen is not waiting for a not-answerable question.")
        questions_create(
            assignment=assignment,
            screen=screen,
            texts=[cleaned["question"]],
            source=QuestionSource.NOT_ANSWERABLE,
            state=QuestionState.ANSWERING,
        )

    def payload_extra(self, *, assignment: Assignment) -> dict[str, Any]:
        return {"previous_questions": [question_brief(q) for q in screen_questions(assignment.screen)]}

    # --- quality control -------------------------------------------------------------------

    def review_rejected(self, *, reviewed: Assignment, reason: str, now: datetime) -> None:
        questions_drop(written_by=Question.objects.filter(origin=reviewed), reason=REASON_REVIEW_REJECTED)

    def review_reverted(self, *, reviewed: Assignment, now: datetime) -> dict[str, int]:
        return questions_restore(Question.objects.filter(origin=reviewed, drop_reason=REASON_REVIEW_REJECTED))

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
        """As the question passes: the writer's questions, answered or not, but for the sets a review
        accepted."""
        mine = Question.objects.filter(screen__project=project, author=user, source=QuestionSource.NOT_ANSWERABLE)
        if assignments is not None:
            mine = mine.filter(origin_id__in=list(assignments))
        return questions_drop(
            written_by=author_questions_withdrawable(mine), reason=author_withdrawal_reason(event), event=event
        )

    def restore(self, *, project: Project, user: Any, event: QualityEvent, now: datetime) -> dict[str, int]:
        withdrawn = Question.objects.filter(screen__project=project, withdrawn_by=event)
        return questions_restore(withdrawn.filter(source=QuestionSource.NOT_ANSWERABLE))

    # --- the page ----------------------------------------------------------------------------

    def form_body(self, *, post: QueryDict, assignment: Assignment) -> dict[str, Any]:
        question = form_text(post, "question")
        if not question:
            raise form_refuse(self.messages["empty"], field="question")
        return {"question": question}

    def form_state(self, *, post: QueryDict) -> dict[str, Any]:
        return {"question": post.get("question", "")}

    def draft_lines(self, *, draft: dict[str, Any]) -> list[tuple[str, str]]:
        text = draft.get("question")
        return [("Question", text)] if isinstance(text, str) and text.strip() else []

    def page_context(self, *, payload: dict[str, Any], state: dict[str, Any], limits: dict[str, int]) -> dict[str, Any]:
        return {"previous_questions": [q["text"] for q in payload.get("previous_questions") or []]}

    # --- progress and crowd ------------------------------------------------------------------

    def pending(self, *, project: Project, screens: dict[str, int], questions: dict[str, int]) -> int:
        """Sampled screens still without their not-answerable question."""
        return (
            Screen.objects.filter(project=project, not_answerable_sampled=True, state=ScreenState.ANSWERING)
            .exclude(self.unit.has(self.name, _submitted()))
            .count()
        )

    def crowd_lead_step(self, *, project: Project) -> dict[str, Any] | None:
        """The lead starts (or tops up) the sample with its default size."""
        return not_answerable_start(project=project)

    def crowd_submission(self, *, payload: dict[str, Any], actor: Any) -> dict[str, Any]:
        asked = {q["text"].casefold() for q in payload.get("previous_questions", [])}
        options = [t for t in NOT_ANSWERABLE_TEMPLATES if t.casefold() not in asked]
        return {"question": actor.rng.choice(options or ["What is the weather tomorrow in Oslo?"])}


NOT_ANSWERABLE_TEMPLATES = [
    "What is the phone number of the customer support?",
    "How many calories does the lunch menu have?",
    "What is the name of the app's developer?",
    "When was my last password change?",
    "What is the shipping address on file?",
    "Which language is the app set to?",
]


def _submitted() -> Q:
    return Q(status=AssignmentStatus.SUBMITTED)


def _needed(*, target: float, total: int, written: int, pending: int) -> int:
    """Screens still to sample so that ``written`` of ``total`` questions (plus one per pending
    screen) reach the share ``target``."""
    needed = math.ceil((target * total - written) / (1 - target)) if target < 1 else SAMPLE_MAX
    return max(0, min(SAMPLE_MAX, needed - pending))


def not_answerable_default_size(*, project: Project) -> dict[str, Any]:
    """The sample that reaches the target in every split (the sample is stratified: a split's
    share of not-answerable questions is its own), with the counts it comes from, overall and
    per split (``splits``: questions, not-answerable questions, pending screens, the sample it
    needs, and its current ``share``)."""
    # Counted by the database, per split (one row per split, not one per question: at ScreenQA size the
    # questions' splits pulled into Python took most of the actions page's second)
    rows = (
        Question.objects.filter(screen__project=project)
        .exclude(state=QuestionState.DROPPED)
        .values_list("screen__split")
        .annotate(total=Count("pk"), written=Count("pk", filter=Q(source=QuestionSource.NOT_ANSWERABLE)))
        .order_by()
    )
    per_total: Counter[str] = Counter()
    per_written: Counter[str] = Counter()
    for split, total, written in rows:
        per_total[split] += total
        per_written[split] += written
    per_pending: Counter[str] = Counter(
        dict(
            Screen.objects.filter(project=project, not_answerable_sampled=True)
            .exclude(SCREEN.has(Stage.NOT_ANSWERABLE, _submitted()))
            .values_list("split")
            .annotate(n=Count("pk"))
            .order_by()
        )
    )
    target = project.not_answerable_target
    splits = {}
    for split in [s for s in Split.values if per_total[s] or per_pending[s]]:
        total, written, pending = per_total[split], per_written[split], per_pending[split]
        splits[split] = {
            "questions": total,
            "not_answerable_questions": written,
            "pending": pending,
            "default": _needed(target=target, total=total, written=written, pending=pending),
            "share": round(written / total, 4) if total else 0.0,
        }
    return {
        "questions": sum(per_total.values()),
        "not_answerable_questions": sum(per_written.values()),
        "pending": sum(per_pending.values()),
        "default": min(SAMPLE_MAX, sum(row["default"] for row in splits.values())),
        "target": target,
        "splits": splits,
    }


def _allocate(*, requested: int, weights: dict[str, int], room: dict[str, int]) -> dict[str, int]:
    """``requested`` screens over the splits in proportion to ``weights`` (largest remainder),
    never more than a split's ``room``; what a full split cannot take goes to the others."""
    take = dict.fromkeys(room, 0)
    while (left := requested - sum(take.values())) > 0:
        open_ = sorted(s for s in room if take[s] < room[s])
        if not open_:
            break
        total = sum(weights.get(s, 0) for s in open_)
        exact = {s: left * (weights.get(s, 0) / total if total else 1 / len(open_)) for s in open_}
        share = {s: int(exact[s]) for s in open_}
        for s in sorted(open_, key=lambda s: exact[s] - share[s], reverse=True)[: left - sum(share.values())]:
            share[s] += 1
        for s in open_:
            take[s] = min(room[s], take[s] + share[s])
    return take


@transaction.atomic
def not_answerable_start(*, project: Project, sample_size: Any = None) -> dict[str, Any]:
    """Sample screens for the not-answerable stage (a lead's action), stratified by split.

    Locks the project so two starts do not both sample. Adds to earlier samples; with no
    ``sample_size`` tops each split up to the target (a repeat adds nothing); a given size is
    spread over the splits in proportion to what each still needs (to their questions when
    none needs any). Returns ``{"sampled", "requested", "available", "questions",
    "not_answerable_questions", "pending", "target", "splits"}``, each split with its
    ``sampled``.
    """
    if sample_size is not None and (type(sample_size) is not int or not 1 <= sample_size <= SAMPLE_MAX):
        raise ApplicationError(f"The sample size is a whole number from 1 to {SAMPLE_MAX}.", field="sample_size")
    project_lock(project_id=project.pk)
    counts = not_answerable_default_size(project=project)
    requested = counts["default"] if sample_size is None else sample_size
    pools: dict[str, list[tuple[int, str]]] = {}
    for pk, rico_id, split in Screen.objects.filter(
        project=project, state=ScreenState.ANSWERING, not_answerable_sampled=False
    ).values_list("pk", "rico_id", "split"):
        pools.setdefault(split, []).append((pk, rico_id))
    for pool in pools.values():
        pool.sort(
            key=lambda row: (
                split_bucket(seed=project.split_seed, slug=project.slug, rico_id=row[1], salt="na"),
                row[1],
            )
        )
    room = {split: len(pool) for split, pool in pools.items()}
    needs = {split: counts["splits"].get(split, {}).get("default", 0) for split in pools}
    if sample_size is None:
        take = {split: min(needs[split], room[split]) for split in pools}
    else:
        weights = needs if any(needs.values()) else {s: counts["splits"].get(s, {}).get("questions", 0) for s in pools}
        take = _allocate(requested=requested, weights=weights, room=room)
    chosen = [pk for split, pool in pools.items() for pk, _ in pool[: take[split]]]
    Screen.objects.filter(pk__in=chosen).update(not_answerable_sampled=True)
    for split, row in counts["splits"].items():
        row["sampled"] = take.get(split, 0)
    return {**counts, "requested": requested, "sampled": len(chosen), "available": sum(room.values())}

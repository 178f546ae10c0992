"""Builders for quality-control tests: rows as the engine leaves them (assignments with their
durations, gold items with their results, questions and answers), written directly so that each
figure of the report can be checked against numbers chosen by hand."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from annotation.models import (
    Answer,
    AnswerElement,
    Assignment,
    AssignmentStatus,
    ControlResult,
    GoldItem,
    Project,
    Purpose,
    Question,
    QuestionSource,
    QuestionState,
    ScreenState,
    Standing,
)
from tests.factories import ScreenFactory

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.get_current_timezone())
PREFILTER_RIGHT = {"non_english_app": False, "vh_out_of_sync": False}
PREFILTER_WRONG = {"non_english_app": True, "vh_out_of_sync": False}
WHY_WRONG = "Judged differently: non-English app."


def work(
    project: Project,
    user: Any,
    *,
    seconds: float = 30,
    status: str = AssignmentStatus.SUBMITTED,
    stage: str = "prefilter",
    review_state: str = "",
    at: datetime = START,
) -> Assignment:
    """A real-work assignment of ``user`` that took ``seconds`` (submitted, or skipped)."""
    screen = ScreenFactory(project=project)
    row = Assignment.objects.create(
        project=project,
        stage=stage,
        screen=screen,
        annotator=user,
        status=status,
        lease_expires_at=at + timedelta(hours=1),
        submitted_at=at + timedelta(seconds=seconds) if status == AssignmentStatus.SUBMITTED else None,
        submission=PREFILTER_RIGHT if status == AssignmentStatus.SUBMITTED else None,
        review_state=review_state,
    )
    Assignment.objects.filter(pk=row.pk).update(created_at=at)
    row.refresh_from_db()
    return row


def gold(
    project: Project, *, stage: str = "prefilter", answer: dict[str, Any] | None = None, on: Question | None = None
) -> GoldItem:
    """A gold item on a screen past pre-filtering (a unit still in the stage's queue is not served as
    gold), or on the question ``on`` (a gold item of the answers stage)."""
    screen = on.screen if on else ScreenFactory(project=project, state=ScreenState.QUESTIONS_1)
    return GoldItem.objects.create(
        project=project, stage=stage, screen=screen, question=on, answer=answer or PREFILTER_RIGHT
    )


def control(
    project: Project,
    user: Any,
    *,
    correct: bool,
    item: GoldItem | None = None,
    purpose: str = Purpose.CONTROL,
    attempt: int = 0,
    at: datetime = START,
) -> ControlResult:
    """``user`` answered a gold item (a new one unless ``item``), right or wrong, at ``at``."""
    item = item or gold(project)
    given = PREFILTER_RIGHT if correct else PREFILTER_WRONG
    assignment = Assignment.objects.create(
        project=project,
        stage=item.stage,
        screen=item.screen,
        question=item.question,
        annotator=user,
        status=AssignmentStatus.SUBMITTED,
        lease_expires_at=at + timedelta(hours=1),
        submitted_at=at + timedelta(seconds=20),
        submission=given,
        purpose=purpose,
        gold=item,
        attempt=attempt,
    )
    result = ControlResult.objects.create(
        assignment=assignment,
        gold=item,
        project=project,
        user=user,
        stage=item.stage,
        purpose=purpose,
        attempt=attempt,
        correct=correct,
        feedback={"given": given, "gold": item.answer, "why": "" if correct else WHY_WRONG},
    )
    ControlResult.objects.filter(pk=result.pk).update(created_at=at)
    return result


def standing(project: Project, user: Any, *, stage: str = "prefilter", status: str = "active", **kw: Any) -> Standing:
    return Standing.objects.create(project=project, user=user, stage=stage, status=status, **kw)


def question(
    project: Project,
    *,
    author: Any = None,
    source: str = QuestionSource.PASS_1,
    split: str = "train",
    state: str = QuestionState.ANSWERED,
) -> Question:
    screen = ScreenFactory(project=project, split=split, state="answering")
    return Question.objects.create(
        screen=screen, author=author, source=source, position=0, text="What is shown?", state=state, answers_needed=3
    )


def answer(q: Question, user: Any, verdict: str = "answered", texts: tuple[str, ...] = ()) -> Answer:
    a = Answer.objects.create(question=q, annotator=user, verdict=verdict, question_text=q.text)
    for i, text in enumerate(texts):
        AnswerElement.objects.create(answer=a, position=i, left=0, top=10 * i, right=50, bottom=10 * i + 8, text=text)
    return a

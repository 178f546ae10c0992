"""Builders for engine tests: projects with screens, candidates and members."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from annotation.models import (
    Assignment,
    ControlResult,
    GoldItem,
    Project,
    Question,
    QuestionSource,
    QuestionState,
    Screen,
    ScreenState,
)
from tests.factories import AppFactory, CandidateFactory, MembershipFactory, ScreenFactory, UserFactory


def member(project: Project, username: str, *, role: str = "annotator", pool: bool = True) -> Any:
    user = UserFactory(username=username)
    MembershipFactory(project=project, user=user, role=role, in_answer_pool=pool)
    return user


def screens(project: Project, count: int, *, state: str = ScreenState.PREFILTER, candidates: int = 3, **kw: Any):
    """``count`` screens of one app, each with ``candidates`` text candidates (vh_index 1..n)."""
    app = kw.pop("app", None) or AppFactory(project=project)
    made = []
    for _ in range(count):
        screen = ScreenFactory(project=project, app=app, state=state, **kw)
        for k in range(candidates):
            CandidateFactory(
                screen=screen,
                vh_index=k + 1,
                left=10,
                top=100 * k + 10,
                right=500,
                bottom=100 * k + 80,
                text=f"Label {k + 1} of {screen.rico_id}",
            )
        made.append(screen)
    return made


def answering_question(screen: Screen, *, author: Any = None, needed: int = 1, text: str = "What is shown?"):
    """A question already waiting for answers (its screen in ``answering`` with a split)."""
    if screen.state != ScreenState.ANSWERING:
        screen.state = ScreenState.ANSWERING
        screen.split = screen.split or "train"
        screen.save()
    position = Question.objects.filter(screen=screen).count()
    return Question.objects.create(
        screen=screen,
        author=author,
        source=QuestionSource.PASS_1,
        position=position,
        text=text,
        state=QuestionState.ANSWERING,
        answers_needed=needed,
    )


def prefilter_control_record(project: Project, user: Any, *, right: int, items: int = 12) -> None:
    """``items`` pre-filtering control results of ``user``, the first ``right`` of them correct (their
    gold items retired since: none is served), for the judge's reliability (``judge_weights``)."""
    for i, gold_screen in enumerate(screens(project, items, state=ScreenState.QUESTIONS_1)):
        gold = GoldItem.objects.create(project=project, stage="prefilter", screen=gold_screen, answer={}, active=False)
        done = Assignment.objects.create(
            project=project,
            stage="prefilter",
            screen=gold_screen,
            annotator=user,
            status="submitted",
            lease_expires_at=timezone.now(),
            submitted_at=timezone.now(),
            purpose="control",
            gold=gold,
        )
        ControlResult.objects.create(
            assignment=done,
            gold=gold,
            project=project,
            user=user,
            stage="prefilter",
            purpose="control",
            correct=i < right,
        )

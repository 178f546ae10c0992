"""Kept questions with answers, as post-processing leaves them (for export and import tests)."""

from __future__ import annotations

from typing import Any

import factory

from annotation import models
from tests.factories import ScreenFactory


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Question

    screen = factory.SubFactory(ScreenFactory)
    source = models.QuestionSource.PASS_1
    position = factory.Sequence(lambda n: n % 30000)
    text = factory.Sequence(lambda n: f"What is item {n}?")
    final_text = ""
    state = models.QuestionState.KEPT


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Answer

    question = factory.SubFactory(QuestionFactory)
    verdict = models.Verdict.ANSWERED
    question_text = factory.LazyAttribute(lambda o: o.question.text)
    full_answer = "It is there."
    kept = True


class AnswerElementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.AnswerElement

    answer = factory.SubFactory(AnswerFactory)
    position = 0
    vh_index = None
    left = 10
    top = 20
    right = 110
    bottom = 60
    text = "item"


def kept_question(
    *,
    screen: models.Screen,
    text: str,
    position: int,
    answers: list[tuple[str, list[dict[str, Any]]]] = (),  # type: ignore[assignment]
    short_answers: list[str] | None = None,
    final_text: str = "",
    **extra: Any,
) -> models.Question:
    """A kept question with kept answers; each answer is ``(full_answer, [element kwargs, ...])``."""
    question = QuestionFactory(
        screen=screen,
        text=text,
        final_text=final_text,
        position=position,
        short_answers=short_answers or [],
        short_answers_source="rules" if short_answers else "",
        **extra,
    )
    for full_answer, elements in answers:
        answer = AnswerFactory(
            question=question,
            full_answer=full_answer,
            verdict=models.Verdict.ANSWERED if elements else models.Verdict.NOT_ANSWERABLE,
        )
        for index, element in enumerate(elements):
            AnswerElementFactory(answer=answer, position=index, **element)
    return question

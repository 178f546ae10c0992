"""Factories for post-processing tests: answered questions with their answers and elements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import factory

from annotation import models
from tests.factories import ScreenFactory, UserFactory


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Question

    screen = factory.SubFactory(ScreenFactory, split="validation", state="answering")
    source = models.QuestionSource.PASS_1
    position = factory.Sequence(lambda n: n)
    text = factory.Sequence(lambda n: f"What is shown in item {n}?")
    state = models.QuestionState.ANSWERED


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Answer

    question = factory.SubFactory(QuestionFactory)
    annotator = factory.SubFactory(UserFactory)
    verdict = models.Verdict.ANSWERED
    question_text = factory.LazyAttribute(lambda o: o.question.text)
    full_answer = "It is shown on the screen."


class AnswerElementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.AnswerElement

    answer = factory.SubFactory(AnswerFactory)
    position = factory.Sequence(lambda n: n)
    vh_index = None
    left = 10
    top = 10
    right = 200
    bottom = 60
    text = "Item"


# One answer spec: a list of element texts (verdict answered), or "invalid" / "not_answerable",
# or a dict {"verdict", "elements": [(text, (l, t, r, b)) or text], "question_text", "full_answer"}.
AnswerSpec = Sequence[str] | str | dict[str, Any]


def answer_create(question: models.Question, spec: AnswerSpec) -> models.Answer:
    if isinstance(spec, str):
        spec = {"verdict": spec, "elements": []}
    elif not isinstance(spec, dict):
        spec = {"elements": list(spec)}
    answer = AnswerFactory(
        question=question,
        verdict=spec.get("verdict", models.Verdict.ANSWERED),
        question_text=spec.get("question_text", question.text),
        full_answer=spec.get("full_answer", "It is shown on the screen."),
    )
    for position, element in enumerate(spec.get("elements", [])):
        text, bounds = (element, (10, 10, 200, 60)) if isinstance(element, str) else element
        left, top, right, bottom = bounds
        AnswerElementFactory(
            answer=answer, position=position, text=text, left=left, top=top, right=right, bottom=bottom
        )
    return answer


def answered_question(
    *, project: models.Project, split: str, answers: Sequence[AnswerSpec], text: str | None = None, screen=None
) -> models.Question:
    """A question in state ``answered`` on a screen of ``split`` with one answer per spec."""
    if screen is None:
        screen = ScreenFactory(project=project, split=split, state="answering")
    kwargs: dict[str, Any] = {"screen": screen, "answers_needed": len(answers), "answers_done": len(answers)}
    if text is not None:
        kwargs["text"] = text
    question = QuestionFactory(**kwargs)
    for spec in answers:
        answer_create(question, spec)
    return question

"""Factories for the domain models (factory_boy), and helpers that build answered and kept questions."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from PIL import Image

from annotation import models

PASSWORD = "pass-word-123"


def png_bytes(width: int = 108, height: int = 192, color: str = "white") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buf, "PNG")
    return buf.getvalue()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())
    # A known seed, so that a test's screens go to the same splits on every run (a product's project gets
    # a random one: tests/pipeline/stages/test_split.py).
    split_seed = "screenqa"
    # Tests submit in microseconds: the fast-response rule is off unless a test turns it on.
    fast_response_seconds = 0


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = models.Role.ANNOTATOR


class AppFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.App

    project = factory.SubFactory(ProjectFactory)
    package = factory.Sequence(lambda n: f"com.example.app{n}")


class ScreenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Screen

    project = factory.SubFactory(ProjectFactory)
    app = factory.SubFactory(AppFactory, project=factory.SelfAttribute("..project"))
    rico_id = factory.Sequence(lambda n: str(10000 + n))
    width = 1080
    height = 1920
    image = factory.LazyAttribute(
        lambda o: ContentFile(png_bytes(o.width // 10, o.height // 10), name=f"{o.rico_id}.png")
    )
    vh = factory.LazyFunction(lambda: {"activity_name": "com.example/.Main", "activity": {"root": {}}})
    content_sha256 = factory.Sequence(lambda n: f"{n:064d}")


class CandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Candidate

    screen = factory.SubFactory(ScreenFactory)
    vh_index = factory.Sequence(lambda n: n + 1)
    left = 10
    top = 10
    right = 200
    bottom = 60
    class_name = "android.widget.TextView"
    type = models.ElementType.TEXT
    text = factory.Sequence(lambda n: f"Item {n}")


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Question

    screen = factory.SubFactory(ScreenFactory, split="validation", state="answering")
    source = models.QuestionSource.PASS_1
    position = factory.Sequence(lambda n: n % 30000)
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
    """A question in state ``answered`` (as the answer engine leaves it) on a screen of ``split``,
    with one answer per spec."""
    if screen is None:
        screen = ScreenFactory(project=project, split=split, state="answering")
    kwargs: dict[str, Any] = {"screen": screen, "answers_needed": len(answers), "answers_done": len(answers)}
    if text is not None:
        kwargs["text"] = text
    question = QuestionFactory(**kwargs)
    for spec in answers:
        answer_create(question, spec)
    return question


def kept_question(
    *,
    screen: models.Screen,
    text: str,
    position: int,
    answers: Sequence[tuple[str, list[dict[str, Any]]]] = (),
    short_answers: list[str] | None = None,
    final_text: str = "",
    **extra: Any,
) -> models.Question:
    """A question as post-processing keeps it, with kept answers; each answer is
    ``(full_answer, [element kwargs, ...])`` (no element: verdict not answerable)."""
    question = QuestionFactory(
        screen=screen,
        text=text,
        final_text=final_text,
        position=position,
        short_answers=short_answers or [],
        short_answers_source="rules" if short_answers else "",
        **{"state": models.QuestionState.KEPT, **extra},
    )
    for full_answer, elements in answers:
        answer = AnswerFactory(
            question=question,
            full_answer=full_answer,
            verdict=models.Verdict.ANSWERED if elements else models.Verdict.NOT_ANSWERABLE,
        )
        for index, element in enumerate(elements):
            fields = {"left": 10, "top": 20, "right": 110, "bottom": 60, "text": "item", **element}
            AnswerElementFactory(answer=answer, position=index, **fields)
    return question


JOB_KINDS = ("import", "postprocess", "short-answers", "export", "members", "suggestions")
# The kinds with their own status and re-run endpoints and pages (the suggestions job has none: the
# quality page says whether one runs, and the next submission queues another: docs/assist.md).
PAGE_JOB_KINDS = tuple(kind for kind in JOB_KINDS if kind != "suggestions")


def job_of_kind(*, kind: str, project: models.Project, **fields: Any) -> models.Job:
    """A job row of ``kind`` (one of ``pipeline.kinds``); an import names a zip that is not stored."""
    if kind == "import":
        fields = {"source": "imports/missing.zip", "source_kind": "zip", **fields}
        return models.ImportJob.objects.create(project=project, **fields)
    if kind == "members":
        names = [[1, f"{project.slug}/crowd-1", ""], [2, f"{project.slug}/crowd-2", "c2@example.org"]]
        fields = {"request": {"names": names, "role": "annotator", "in_answer_pool": True}, **fields}
        return models.MemberJob.objects.create(project=project, **fields)
    if kind == "suggestions":
        return models.AssistJob.objects.create(project=project, **fields)
    fields = {"format": "screenqa" if kind == "export" else "", **fields}
    return models.ReleaseJob.objects.create(project=project, kind=kind, **fields)

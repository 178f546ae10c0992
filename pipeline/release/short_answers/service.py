"""Short answers of kept questions: the generating job, the lead's edit and the review sample."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import CharField, Prefetch, QuerySet, Value
from django.db.models.functions import MD5, Cast, Concat

from annotation.db.bulk import batched, bulk_set
from annotation.exceptions import ApplicationError, ConflictError, NotFoundError
from annotation.lock_objects import question_lock
from annotation.models import Answer, AnswerElement, Project, Question, QuestionState, ReleaseJob, Verdict
from annotation.selectors.screens import screen_payload
from pipeline.assist.client import AssistError, Backend
from pipeline.assist.service import short_answers_suggested
from pipeline.decisions.decide import clean_text
from pipeline.jobs.lifecycle import Outcome, Progress

from . import NO_ANSWER, short_answers_generate

SAMPLE_MAX = 200
SHORT_ANSWERS_MAX = 50
SHORT_ANSWER_MAX_CHARS = 500


def _answers_prefetch(queryset: QuerySet[Answer] | None = None) -> Prefetch:
    answers = (queryset if queryset is not None else Answer.objects.all()).order_by("created_at", "pk")
    return Prefetch(
        "answers",
        queryset=answers.prefetch_related(Prefetch("elements", queryset=AnswerElement.objects.order_by("position"))),
    )


@dataclass
class _Assist:
    """The project's suggestion backend asked for short answers (``Project.assist_short_answers``),
    with its failures counted for the job's result."""

    project: Project
    backend: Backend
    failures: int = 0
    last_error: str = ""
    # the last question's screen payload: its answers (three in validation) share it
    screen: tuple[int, dict[str, Any]] | None = None

    def ask(self, question: Question, elements: list[str], full_answer: str) -> list[str] | None:
        if self.screen is None or self.screen[0] != question.screen_id:
            self.screen = (question.screen_id, screen_payload(screen=question.screen))
        try:
            texts = short_answers_suggested(
                project=self.project,
                backend=self.backend,
                question=question,
                elements=elements,
                full_answer=full_answer,
                screen=self.screen[1],
            )
        except AssistError as exc:
            self.failures += 1
            self.last_error = str(exc)
            return None
        texts = [t for t in texts if len(t) <= SHORT_ANSWER_MAX_CHARS][:SHORT_ANSWERS_MAX]
        return texts or None


def _short_answers_for(question: Question, backend: str | None, assist: _Assist | None = None) -> tuple[list[str], str]:
    """The short answers of one kept question and where they came from: the union over its kept
    answers, the first answer's first. With ``assist``, each answer's come from the backend, the
    rules' where it fails (a not-answerable question is the rules' ``<no answer>`` whatever the backend)."""
    kept = [a for a in question.answers.all() if a.kept]
    text = question.final_text or question.text
    if not kept or all(a.verdict == Verdict.NOT_ANSWERABLE for a in kept):
        result = short_answers_generate(
            question=text, elements=[], full_answer="", not_answerable=True, backend=backend
        )
        return list(result.answers) or [NO_ANSWER], result.source
    merged: dict[str, None] = {}
    source = ""
    for answer in kept:
        elements = [e.text for e in answer.elements.all()]
        suggested = assist.ask(question, elements, answer.full_answer) if assist is not None else None
        if suggested is not None:
            answers, origin = suggested, "assist"
        else:
            result = short_answers_generate(
                question=text, elements=elements, full_answer=answer.full_answer, backend=backend
            )
            answers, origin = result.answers, result.source
        merged.update(dict.fromkeys(a for a in answers if a))
        source = source or origin
    return list(merged), source


def short_answers_job_work(
    *, job: ReleaseJob, progress: Progress, batch_size: int = 200, backend: str | None = None
) -> Outcome:
    """The short-answer job's work (``pipeline.kinds``): short answers for every kept question of the
    job's project that has none yet (``short_answers_source`` empty), batch by batch. With the
    project's ``assist_short_answers`` and a backend, each answer's come from the backend (the rules'
    where a call fails: the result counts the failures and names the last).

    A re-run does only the missing work; a question whose short answers a lead saved meanwhile keeps them
    (the write is conditional on the source still being empty).
    """
    project = job.project
    model = Backend.of(project) if project.assist_short_answers else None
    assist = _Assist(project=project, backend=model) if model is not None else None
    questions = Question.objects.filter(screen__project=project, state=QuestionState.KEPT, short_answers_source="")
    total = questions.count()
    progress(0, total)
    processed = written = 0
    sources: Counter[str] = Counter()
    ordered = questions.order_by("pk")
    # The screen (its view hierarchy, the largest column read) only for the backend's screen payload: loaded
    # for every question it was 60% of the job at ScreenQA size (docs/performance.md).
    if assist is not None:
        ordered = ordered.select_related("screen", "screen__app")
    stream = ordered.prefetch_related(_answers_prefetch()).iterator(chunk_size=batch_size)
    for batch in batched(stream, batch_size):
        for question in batch:
            question.short_answers, question.short_answers_source = _short_answers_for(question, backend, assist)
            sources[question.short_answers_source] += 1
        with transaction.atomic():
            written += bulk_set(
                Question, batch, ["short_answers", "short_answers_source"], only_if={"short_answers_source": [""]}
            )
        processed += len(batch)
        progress(processed, max(total, processed))
    result: dict[str, Any] = {"generated": written, "sources": dict(sources)}
    if assist is not None:
        result["assist_failures"] = assist.failures
        if assist.last_error:
            result["assist_last_error"] = assist.last_error
    return Outcome(result=result)


def question_short_answers_update(*, project: Project, question_id: int, answers: Sequence[str], user: Any) -> Question:
    """A lead's short answers for one kept question: source ``lead``, reviewer recorded.

    Blank lines are ignored, duplicates removed, order kept. Locks the question
    (``question_lock``) so the edit and a generator's write cannot interleave.
    """
    cleaned = list(dict.fromkeys(clean_text(a) for a in answers if clean_text(a)))
    if not cleaned:
        raise ApplicationError("Give at least one short answer.", field="short_answers")
    if len(cleaned) > SHORT_ANSWERS_MAX:
        raise ApplicationError(f"At most {SHORT_ANSWERS_MAX} short answers.", field="short_answers")
    if any(len(a) > SHORT_ANSWER_MAX_CHARS for a in cleaned):
        raise ApplicationError(
            f"A short answer has at most {SHORT_ANSWER_MAX_CHARS} characters.", field="short_answers"
        )
    with transaction.atomic():
        if not Question.objects.filter(pk=question_id, screen__project=project).exists():
            raise NotFoundError("Question not found.")
        question = question_lock(question_id=question_id)
        if question.state != QuestionState.KEPT:
            raise ConflictError("Only kept questions have short answers.")
        question.short_answers = cleaned
        question.short_answers_source = "lead"
        question.short_answers_reviewed_by = user
        question.save(update_fields=["short_answers", "short_answers_source", "short_answers_reviewed_by"])
    return question


def short_answers_sample(*, project: Project, size: int, seed: str) -> list[Question]:
    """A seeded random sample of ``size`` kept questions, with screen, kept answers and elements.

    Ordered by ``md5(seed || id)`` in the database: the same seed gives the same sample, and
    no list of the project's questions is held in memory. Three queries.
    """
    if not 1 <= size <= SAMPLE_MAX:
        raise ApplicationError(f"Sample size must be between 1 and {SAMPLE_MAX}.", field="size")
    if len(seed) > 64:
        raise ApplicationError("Seed has at most 64 characters.", field="seed")
    return list(
        Question.objects.filter(screen__project=project, state=QuestionState.KEPT)
        .annotate(_rank=MD5(Concat(Value(seed), Value(":"), Cast("pk", CharField()))))
        .order_by("_rank", "pk")
        .select_related("screen__project", "short_answers_reviewed_by")
        .prefetch_related(_answers_prefetch(Answer.objects.filter(kept=True)))[:size]
    )

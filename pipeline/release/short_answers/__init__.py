"""Short answers (stage 6): from the question, the ordered element texts and the full answer, the
list of acceptable short answers.

``short_answers_generate`` is the one entry point. The rule-based generator (``rules``) is the default
and works offline; the LLM backend (``llm``, the paper's few-shot prompt over an OpenAI-compatible
endpoint) is chosen with ``backend="llm"`` or ``SHORT_ANSWERS_BACKEND=llm`` and falls back to the
rules on any error, logging why.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.release.short_answers.llm import LLMError, llm_short_answers
from pipeline.release.short_answers.rules import NO_ANSWER, short_answers_from_rules

__all__ = ["BACKENDS", "NO_ANSWER", "ShortAnswers", "short_answers_generate"]

logger = logging.getLogger(__name__)

BACKENDS = ("rules", "llm")


@dataclass
class ShortAnswers:
    answers: list[str]
    source: str  # "rules" | "llm"


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def short_answers_generate(
    *,
    question: str,
    elements: Sequence[str],
    full_answer: str,
    not_answerable: bool = False,
    backend: str | None = None,
) -> ShortAnswers:
    """The acceptable short answers of one answered question.

    Contract: ``answers`` is non-empty, starts with the primary answer, holds no duplicates and is
    deterministic for the rules. A not-answerable question (or one with no element text) gives
    ``["<no answer>"]`` from the rules whatever the backend. ``backend=None`` reads
    ``SHORT_ANSWERS_BACKEND`` (``rules`` when unset); an unknown name is a ``ValueError``.
    The LLM backend makes one HTTP request and never raises: on any failure it logs a warning with
    the reason and returns the rules' answers (``source == "rules"``).
    """
    name = (backend or os.environ.get("SHORT_ANSWERS_BACKEND") or "rules").strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"unknown short-answer backend {name!r}; expected one of {', '.join(BACKENDS)}")
    texts = [e for e in elements if e and e.strip()]
    if name == "llm" and not not_answerable and texts:
        try:
            answers = llm_short_answers(question=question, elements=texts, full_answer=full_answer)
            return ShortAnswers(answers=_dedupe(answers), source="llm")
        except LLMError as exc:
            logger.warning("short answers: LLM backend failed (%s); using the rules", exc)
    answers = short_answers_from_rules(
        question=question, elements=texts, full_answer=full_answer, not_answerable=not_answerable
    )
    return ShortAnswers(answers=answers, source="rules")

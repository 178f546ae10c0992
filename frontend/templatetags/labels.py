"""Codes the pipeline stores, as a lead reads them."""

from __future__ import annotations

import re
from typing import Any

from django import template

from annotation.models import StandingStatus
from pipeline.stages.base import submission_lines
from pipeline.stages.prefilter import EXCLUSION_REASONS
from pipeline.stages.registry import stages

register = template.Library()


@register.filter
def exclusion_reason(code: str) -> str:
    """Why pre-filtering excluded a screen: ``"non_english"`` -> ``"non-English app"``."""
    return EXCLUSION_REASONS.get(code, code)


@register.filter
def answer_lines(value: Any) -> list[tuple[str, str]]:
    """A submission or a gold answer as ``(label, text)`` lines, as the annotator's feedback shows it."""
    if isinstance(value, dict):
        return submission_lines(value)
    return [("", str(value))] if value else []


@register.filter
def stage_label(code: str) -> str:
    """A stage as people name it: ``"questions-1"`` -> ``"Questions, pass 1"``."""
    stage = stages().get(code)
    return stage.label if stage is not None else code


@register.filter
def standing_label(code: str) -> str:
    """A standing's status as people say it: ``"not_qualified"`` -> ``"not qualified"``."""
    return str(dict(StandingStatus.choices).get(code, code)).lower()


_SECOND_PERSON = [
    (re.compile(r"\bYou are\b"), "They are"),
    (re.compile(r"\byou are\b"), "they are"),
    (re.compile(r"\bYou\b"), "They"),
    (re.compile(r"\byou\b"), "they"),
    (re.compile(r"\bYour\b"), "Their"),
    (re.compile(r"\byour\b"), "their"),
]


@register.filter
def third_person(text: str) -> str:
    """A reason written for the annotator ("2 of your first 5 accepted"), as a lead reads it about
    them ("2 of their first 5 accepted")."""
    for pattern, replacement in _SECOND_PERSON:
        text = pattern.sub(replacement, text)
    return text

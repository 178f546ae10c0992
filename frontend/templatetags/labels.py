"""Codes the pipeline stores, as a lead reads them."""

from __future__ import annotations

from typing import Any

from django import template

from pipeline.stages.base import submission_lines
from pipeline.stages.prefilter import EXCLUSION_REASONS

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

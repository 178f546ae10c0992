"""Codes the pipeline stores, as a lead reads them."""

from __future__ import annotations

from django import template

from pipeline.stages.prefilter import EXCLUSION_REASONS

register = template.Library()


@register.filter
def exclusion_reason(code: str) -> str:
    """Why pre-filtering excluded a screen: ``"non_english"`` -> ``"non-English app"``."""
    return EXCLUSION_REASONS.get(code, code)

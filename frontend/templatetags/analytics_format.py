"""Number formats of the analysis page."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def pct(share: float | None) -> str:
    """A share (0..1) as a percentage with one decimal: ``0.005`` -> ``"0.5%"``; ``None`` -> ``"—"``."""
    if share is None:
        return "—"
    return f"{100 * share:.1f}%"

"""Quality control's side of what the stages report (``pipeline.stages.signals``): a review that stands or
is withdrawn moves the reviewed writer's qualification by review, or an active writer's evidence
(``standing.review_recorded``, ``standing.review_qualifications_reopen``,
``standing.review_pauses_reconsider``). Imported when Django starts (``pipeline.apps``)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from pipeline.stages.signals import review_recorded, reviews_withdrawn

from . import standing


@receiver(review_recorded, dispatch_uid="quality.review_recorded")
def _review_recorded(sender: Any, *, reviewed: Any, now: Any, **_: Any) -> None:
    standing.review_recorded(reviewed=reviewed, now=now)


@receiver(reviews_withdrawn, dispatch_uid="quality.reviews_withdrawn")
def _reviews_withdrawn(sender: Any, *, withdrawn: list[Any], now: Any, **_: Any) -> None:
    standing.review_qualifications_reopen(withdrawn=withdrawn, now=now)
    standing.review_pauses_reconsider(withdrawn=withdrawn, now=now)

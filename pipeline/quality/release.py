"""Quality-control figures of a release (the ``quality`` section of ``manifest.json``, docs/quality.md).

Deterministic (no timestamp), like the rest of the manifest:

* ``release_answers``: the released answers (kept answers of kept questions) by the standing of
  their annotator in the answers stage when the release is made: ``active`` (qualified),
  ``lead`` (leads and site admins are never gated), ``no_standing`` (work from before quality
  control, or imported), and any other status (a paused annotator's work kept by the project's
  ``paused_work`` setting);
* ``control_accuracy``: each annotator's accuracy on their control items, per stage, as a
  distribution (annotators, min, quartiles, max);
* ``reviews``: reviews done and rejected, per reviewed stage;
* ``withdrawn``: answers and questions taken out of the release by quality control, by reason.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from django.db.models import Count, Q

from annotation.models import (
    Answer,
    ControlResult,
    Membership,
    Project,
    Purpose,
    Question,
    QuestionState,
    Review,
    ReviewVerdict,
    Role,
    Stage,
    Standing,
)
from pipeline.release.decide import QUALITY_ANSWER_REASONS, QUALITY_QUESTION_REASONS


def _distribution(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"annotators": 0}
    values = sorted(values)
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {
        "annotators": len(values),
        "min": round(values[0], 4),
        "q1": round(q1, 4),
        "median": round(median, 4),
        "q3": round(q3, 4),
        "max": round(values[-1], 4),
    }


def release_answers_by_standing(*, project: Project) -> dict[str, int]:
    released = (
        Answer.objects.filter(question__screen__project=project, question__state=QuestionState.KEPT, kept=True)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
        .values_list("annotator_id", "n")
    )
    status = dict(Standing.objects.filter(project=project, stage=Stage.ANSWERS).values_list("user_id", "status"))
    leads = set(
        Membership.objects.filter(project=project)
        .filter(Q(role=Role.LEAD) | Q(user__is_superuser=True))
        .values_list("user_id", flat=True)
    )
    out: Counter[str] = Counter()
    for user_id, n in released:
        key = "lead" if user_id in leads else status.get(user_id, "no_standing") if user_id else "no_standing"
        out[key] += n
    return {"total": sum(out.values()), **dict(sorted(out.items()))}


def control_accuracy(*, project: Project) -> dict[str, dict[str, Any]]:
    per: dict[str, list[float]] = defaultdict(list)
    for stage, _, n, correct in (
        ControlResult.objects.filter(project=project, purpose=Purpose.CONTROL)
        .values_list("stage", "user_id")
        .annotate(n=Count("pk"), correct=Count("pk", filter=Q(correct=True)))
        .values_list("stage", "user_id", "n", "correct")
        .order_by("stage", "user_id")
    ):
        per[stage].append(correct / n)
    return {stage: _distribution(values) for stage, values in sorted(per.items())}


def reviews_done(*, project: Project) -> dict[str, dict[str, int]]:
    rows = (
        Review.objects.filter(reviewed__project=project)
        .values_list("reviewed__stage")
        .annotate(n=Count("pk"), rejected=Count("pk", filter=Q(verdict=ReviewVerdict.REJECTED)))
        .values_list("reviewed__stage", "n", "rejected")
        .order_by("reviewed__stage")
    )
    return {stage: {"done": n, "rejected": rejected} for stage, n, rejected in rows}


def withdrawn_by_quality_control(*, project: Project) -> dict[str, dict[str, int]]:
    answers = (
        Answer.objects.filter(question__screen__project=project, kept=False, drop_reason__in=QUALITY_ANSWER_REASONS)
        .values_list("drop_reason")
        .annotate(n=Count("pk"))
        .values_list("drop_reason", "n")
    )
    questions = (
        Question.objects.filter(screen__project=project, drop_reason__in=QUALITY_QUESTION_REASONS)
        .values_list("drop_reason")
        .annotate(n=Count("pk"))
        .values_list("drop_reason", "n")
    )
    return {"answers": dict(sorted(answers)), "questions": dict(sorted(questions))}


def release_quality_figures(*, project: Project) -> dict[str, Any]:
    """The quality-control section of a release's manifest (the module docstring)."""
    return {
        "release_answers": release_answers_by_standing(project=project),
        "control_accuracy": control_accuracy(project=project),
        "reviews": reviews_done(project=project),
        "withdrawn": withdrawn_by_quality_control(project=project),
    }

"""The lead's figures of model assistance (docs/assist.md): the backend's error rate, what each
annotator does with suggestions, and the release's count of answers accepted unchanged."""

from __future__ import annotations

from typing import Any

from django.db.models import Avg, Count, Q, Sum

from annotation.models import (
    Answer,
    AnswerElement,
    AssistJob,
    AssistUse,
    PrefilterJudgment,
    Project,
    QuestionState,
    Stage,
    Suggestion,
    SuggestionUse,
)
from annotation.models import SuggestionStatus as Status
from pipeline.jobs.lifecycle import jobs_alive

from .contract import JUDGMENTS
from .service import JUDGMENT_SUGGESTED_ABOVE

SPLITS = ("train", "validation", "test")


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def assist_backend_figures(*, project: Project) -> dict[str, Any]:
    """Calls made, how many failed (``error_rate``), items with a suggestion now, the last error."""
    rows = Suggestion.objects.filter(project=project)
    agg = rows.aggregate(
        calls=Sum("calls", default=0),
        failures=Sum("failures", default=0),
        ok=Count("pk", filter=Q(status=Status.OK)),
        failed=Count("pk", filter=Q(status=Status.FAILED)),
        latency=Avg("latency_ms", filter=Q(status=Status.OK)),
    )
    last = rows.filter(status=Status.FAILED).order_by("-updated_at").values_list("error", flat=True).first()
    return {
        "configured": bool(project.assist_url),
        "url": project.assist_url,  # the token never leaves the database
        "calls": agg["calls"],
        "failures": agg["failures"],
        "error_rate": _share(agg["failures"], agg["calls"]),
        "suggested": agg["ok"],
        "failing": agg["failed"],
        "mean_latency_ms": round(agg["latency"]) if agg["latency"] is not None else None,
        "last_error": last or "",
        "job_running": jobs_alive(AssistJob.objects.filter(project=project)).exists(),
        "crowd_agreement": model_crowd_agreement(project=project),
        "prefilter_agreement": model_judge_agreement(project=project),
    }


def model_crowd_agreement(*, project: Project) -> dict[str, Any]:
    """How often the model's first-ranked element is among the elements of the crowd's kept answers
    (questions with a suggestion and at least one kept answer with an element), by candidate."""
    tops: dict[int, int] = {}
    for question_id, result in Suggestion.objects.filter(
        project=project, stage=Stage.ANSWERS, status=Status.OK
    ).values_list("question_id", "result"):
        elements = (result or {}).get("elements") or []
        if question_id is not None and elements and elements[0].get("vh_index") is not None:
            tops[question_id] = elements[0]["vh_index"]
    chosen: dict[int, set[int]] = {}
    rows = AnswerElement.objects.filter(
        answer__question_id__in=list(tops), answer__kept=True, vh_index__isnull=False
    ).values_list("answer__question_id", "vh_index")
    for question_id, vh_index in rows:
        if vh_index is not None:
            chosen.setdefault(question_id, set()).add(vh_index)
    agree = sum(1 for question_id, picked in chosen.items() if tops[question_id] in picked)
    return {"questions": len(chosen), "agree": agree, "share": _share(agree, len(chosen))}


def model_judge_agreement(*, project: Project) -> dict[str, Any]:
    """Pre-filtering: on how many screens with a suggestion and at least one counting judgment the
    model's suggested judgments are both those of the judges' majority (a flag counts when more than
    half of the screen's counting judgments raise it); and, for comparison, on how many of those with two
    judgments or more the judges all agree (``judges_screens``, ``judges_agree``)."""
    suggested: dict[int, dict[str, bool]] = {}
    for screen_id, result in Suggestion.objects.filter(
        project=project, stage=Stage.PREFILTER, status=Status.OK, question__isnull=True
    ).values_list("screen_id", "result"):
        judgments = (result or {}).get("judgments") or {}
        if judgments:
            suggested[screen_id] = {name: judgments.get(name, 0.0) > JUDGMENT_SUGGESTED_ABOVE for name in JUDGMENTS}
    tallies = (
        PrefilterJudgment.objects.filter(screen_id__in=list(suggested), withdrawn_reason="")
        .values("screen_id")
        .annotate(
            n=Count("pk"),
            non_english_app=Count("pk", filter=Q(non_english_app=True)),
            vh_out_of_sync=Count("pk", filter=Q(vh_out_of_sync=True)),
        )
    )
    screens = agree = several = unanimous = 0
    for row in tallies:
        counts: dict[str, int] = dict(row)  # type: ignore[arg-type]  # the names are JUDGMENTS
        screens += 1
        crowd = {name: counts[name] * 2 > counts["n"] for name in JUDGMENTS}
        agree += crowd == suggested[counts["screen_id"]]
        if counts["n"] >= 2:
            several += 1
            unanimous += all(counts[name] in (0, counts["n"]) for name in JUDGMENTS)
    return {
        "screens": screens,
        "agree": agree,
        "share": _share(agree, screens),
        "judges_screens": several,
        "judges_agree": unanimous,
        "judges_share": _share(unanimous, several),
    }


def acceptance_by_stage(*, project: Project) -> dict[str, dict[str, Any]]:
    """Per assisted stage: submissions with a suggestion shown, how many took it unchanged, the share."""
    rows = (
        AssistUse.objects.filter(project=project)
        .exclude(use=SuggestionUse.NONE)
        .values("stage")
        .annotate(shown=Count("pk"), accepted=Count("pk", filter=Q(use=SuggestionUse.ACCEPTED)))
    )
    out: dict[str, dict[str, Any]] = {
        str(stage): {"shown": 0, "accepted": 0, "share": None} for stage in (Stage.ANSWERS, Stage.PREFILTER)
    }
    for row in rows:
        out[row["stage"]] = {
            "shown": row["shown"],
            "accepted": row["accepted"],
            "share": _share(row["accepted"], row["shown"]),
        }
    return out


def model_and_crowd(*, project: Project) -> dict[str, Any]:
    """The analysis page's comparison of the model with the crowd (four queries): answers
    (``crowd_agreement``), pre-filtering (``prefilter_agreement``), and how often suggestions were taken
    unchanged per stage (``accepted``)."""
    return {
        "answers": model_crowd_agreement(project=project),
        "prefilter": model_judge_agreement(project=project),
        "accepted": acceptance_by_stage(project=project),
    }


def assist_annotator_figures(*, project: Project, user_id: int | None = None) -> list[dict[str, Any]]:
    """Per annotator and assisted stage (answers, pre-filtering): suggestions shown (``shown``),
    accepted unchanged, edited; ``acceptance_rate``; on control items, the wrong suggestions met,
    accepted, and their accuracy on those items (``control_accuracy_when_wrong``)."""
    rows = AssistUse.objects.filter(project=project)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    wrong = Q(suggestion_wrong=True) & ~Q(purpose="work")
    figures = (
        rows.values("user_id", "user__username", "stage")
        .annotate(
            submissions=Count("pk"),
            shown=Count("pk", filter=~Q(use=SuggestionUse.NONE)),
            accepted=Count("pk", filter=Q(use=SuggestionUse.ACCEPTED)),
            edited=Count("pk", filter=Q(use=SuggestionUse.EDITED)),
            wrong_met=Count("pk", filter=wrong),
            wrong_accepted=Count("pk", filter=wrong & Q(use=SuggestionUse.ACCEPTED)),
            wrong_correct=Count("pk", filter=wrong & Q(correct=True)),
        )
        .order_by("user__username", "stage")
    )
    return [
        {
            "user_id": row["user_id"],
            "username": row["user__username"],
            "stage": row["stage"],
            "submissions": row["submissions"],
            "shown": row["shown"],
            "accepted": row["accepted"],
            "edited": row["edited"],
            "acceptance_rate": _share(row["accepted"], row["shown"]),
            "wrong_met": row["wrong_met"],
            "wrong_accepted": row["wrong_accepted"],
            "control_accuracy_when_wrong": _share(row["wrong_correct"], row["wrong_met"]),
        }
        for row in figures
    ]


def release_assist_figures(*, project: Project) -> dict[str, Any]:
    """For the manifest: per split, the kept answers of kept questions by ``suggestion_use``
    (``accepted``: accepted from a suggestion unchanged)."""
    rows = (
        Answer.objects.filter(question__screen__project=project, question__state=QuestionState.KEPT, kept=True)
        .values_list("question__screen__split", "suggestion_use")
        .annotate(n=Count("pk"))
    )
    out = {split: dict.fromkeys(SuggestionUse.values, 0) for split in SPLITS}
    for split, use, n in rows:
        if split in out:
            out[split][use] = n
    return {"answers_by_suggestion_use": out}

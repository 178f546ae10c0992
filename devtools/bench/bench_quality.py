"""The proof of quality control: the same crowd, with a share of spammers, through the pipeline to
post-processing twice, without quality control (no gold, the rules off) and with it.

The crowd (``devtools.crowd``): careful 70%, careless 10%, spammers 20% (``SHARES``), the same
annotators in both runs (profiles are assigned by position from the seed). With QC the lead makes
gold before each stage with gold items (``crowd_simulate(qc=True)``): the crowd qualifies on it
and meets control items at the project's default rates.

Figures, for each run: per spammer and per stage with gold, how many items (all purposes) and
control/qualification items they did until a rule stopped them (paused or not qualified), the
share of the release's answers (kept answers of kept questions) from spammers, the pass-2 flags on
each profile's questions (``pass2_flags_by_profile``), and the agreement
shares of validation/test questions (all / two / none agree; the paper: 97.9% all). Targets
(with QC): every spammer stopped within 30 of their items, no spammer answer in the release,
all-agree within 1 point of 97.9%.

Small (CI) size: 160 screens and 10 annotators; ``full``: 800 screens and 20 annotators.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from annotation.models import (
    Answer,
    App,
    Assignment,
    AssignmentStatus,
    Project,
    Purpose,
    QualityEvent,
    Question,
    QuestionState,
    ReleaseJob,
    Screen,
    StandingStatus,
)
from devtools.crowd import crowd_screens_create, crowd_simulate
from pipeline.decisions.selectors import postprocess_summary
from pipeline.engine import stages
from pipeline.jobs.runner import job_run

SHARES = {"careful": 0.7, "careless": 0.1, "spammer": 0.2}
SMALL = {"screens": 160, "annotators": 10}
FULL = {"screens": 800, "annotators": 20}
PAPER_ALL_AGREE = 0.979
STOPPED = (StandingStatus.PAUSED, StandingStatus.NOT_QUALIFIED)


def project_for_run(*, slug: str, qc: bool) -> Project:
    """A fresh project; without QC the rules that need no gold are off too (fast responses, skips)."""
    # The ORM's cascade (candidates, assignments, gold, standings): these projects are small. Apps
    # and screens are protected while assignments and screens refer to them, so those go first.
    old = Project.objects.filter(slug=slug).first()
    if old is not None:
        Assignment.objects.filter(project=old).delete()
        Screen.objects.filter(project=old).delete()
        App.objects.filter(project=old).delete()
        old.delete()
    project = Project.objects.create(slug=slug, name=f"Quality benchmark ({'with' if qc else 'without'} QC)")
    if not qc:
        project.fast_response_seconds = 0
        project.skips_in_a_row = 0
        project.save(update_fields=["fast_response_seconds", "skips_in_a_row"])
    return project


def spammer_stops(*, project: Project, users: list[Any]) -> dict[str, dict[str, Any]]:
    """Per spammer and stage with gold: the items (and gold items) they did until they were stopped
    (the first event that paused them or failed their qualification); ``stopped_by`` None: never."""
    out: dict[str, dict[str, Any]] = {}
    gold_stages = [name for name, stage in stages().items() if stage.has_gold]
    done = [AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED]
    for user in users:
        per_stage: dict[str, Any] = {}
        for stage in gold_stages:
            mine = Assignment.objects.filter(project=project, annotator=user, stage=stage, status__in=done)
            stop = (
                QualityEvent.objects.filter(project=project, user=user, stage=stage, status_after__in=STOPPED)
                .order_by("created_at", "pk")
                .first()
            )
            before = mine.filter(updated_at__lte=stop.created_at) if stop else mine
            if not mine.exists() and stop is None:
                continue
            per_stage[stage] = {
                "items": before.count(),
                "gold_items": before.exclude(purpose=Purpose.WORK).count(),
                "real_items": before.filter(purpose=Purpose.WORK).count(),
                "stopped_by": stop.rule if stop else None,
            }
        out[user.username] = per_stage
    return out


def one_run(*, qc: bool, screens: int, annotators: int, seed: int) -> dict[str, Any]:
    project = project_for_run(slug=f"bench-quality-{'qc' if qc else 'plain'}", qc=qc)
    crowd_screens_create(project=project, count=screens, seed=seed)
    started = time.perf_counter()
    summary = crowd_simulate(
        project=project, annotators=annotators, seed=seed, profiles=SHARES, qc=qc, review_rejects=0.0
    )
    job = ReleaseJob.objects.create(project=project, kind=ReleaseJob.Kind.POSTPROCESS)
    job_run(kind=ReleaseJob.Kind.POSTPROCESS, job_id=job.pk)
    seconds = time.perf_counter() - started
    by_profile = summary["profiles"]
    spammers = list(get_user_model().objects.filter(username__in=[u for u, p in by_profile.items() if p == "spammer"]))
    released = Answer.objects.filter(question__screen__project=project, question__state=QuestionState.KEPT, kept=True)
    counts = Counter(
        by_profile.get(name or "", "lead") for name in released.values_list("annotator__username", flat=True)
    )
    total = sum(counts.values())
    # pass-2 flags on each profile's questions (withdrawn work's flags are cleared)
    flagged = (
        Question.objects.filter(screen__project=project)
        .exclude(flag_reason="")
        .values_list("author__username", flat=True)
    )
    stops = spammer_stops(project=project, users=spammers)
    stage_stops = [s for per in stops.values() for s in per.values()]
    processed = postprocess_summary(project=project)
    split_agreement = Counter[str]()
    for split in ("validation", "test"):
        split_agreement.update(processed["splits"].get(split, {}).get("agreement", {}))
    n_agree = sum(split_agreement.values())
    withdrawn = Answer.objects.filter(question__screen__project=project, kept=False).filter(
        Q(drop_reason="withdrawn") | Q(drop_reason="review-rejected")
    )
    return {
        "qc": qc,
        "seconds": round(seconds, 1),
        "submitted": summary["submitted"],
        "lead_gold": summary["lead_gold"],
        "ready_for_postprocessing": summary["progress"]["ready_for_postprocessing"],
        "release_answers": total,
        "release_answers_by_profile": dict(sorted(counts.items())),
        "pass2_flags_by_profile": dict(sorted(Counter(by_profile.get(n or "", "lead") for n in flagged).items())),
        "spammer_share_of_release": round(counts["spammer"] / total, 4) if total else 0.0,
        "spammers": stops,
        "spammers_stopped_within_30": sum(1 for s in stage_stops if s["stopped_by"] and s["items"] <= 30),
        "spammer_stages": len(stage_stops),
        "refused": {stage: sorted(users) for stage, users in summary["refused"].items()},
        "answers_withdrawn_by_qc": withdrawn.count(),
        "validation_test_agreement": dict(split_agreement),
        "validation_test_agreement_shares": {
            k: round(v / n_agree, 4) if n_agree else 0.0 for k, v in sorted(split_agreement.items())
        },
    }


def run(full: bool = False, seed: int = 0) -> dict[str, Any]:
    size = FULL if full else SMALL
    plain = one_run(qc=False, seed=seed, **size)
    with_qc = one_run(qc=True, seed=seed, **size)
    all_agree = with_qc["validation_test_agreement_shares"].get("all", 0.0)
    return {
        "size": size,
        "shares": SHARES,
        "without_qc": plain,
        "with_qc": with_qc,
        "targets": {
            "every_spammer_stopped_within_30": with_qc["spammers_stopped_within_30"] == with_qc["spammer_stages"],
            "no_spammer_answer_in_release": with_qc["release_answers_by_profile"].get("spammer", 0) == 0,
            "all_agree_within_1_point_of_97_9": abs(all_agree - PAPER_ALL_AGREE) <= 0.01,
            "all_agree_with_qc": all_agree,
        },
    }

"""``manifest.json``: what an export holds and how it was made. Deterministic: no timestamp,
so re-running an export of unchanged data gives byte-identical files, manifest included."""

from __future__ import annotations

import functools
import json
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Count

from annotation.models import Answer, Project, Question, QuestionState
from pipeline.assist.report import release_assist_figures
from pipeline.quality.release import release_quality_figures

from .atomic import atomic_writer
from .records import SPLITS
from .writers import WrittenFiles

MANIFEST_NAME = "manifest.json"
# 2: the quality section says per stage whose work is in the release and on what evidence, what
# quality control withdrew by cause, and what non-English apps took out apart from it.
MANIFEST_VERSION = 2
PROJECT_SETTINGS = (
    "device_width",
    "device_height",
    "prefilter_judgments",
    "questions_pass1_cap",
    "questions_pass2_cap",
    "answers_train",
    "answers_validation",
    "answers_test",
    "split_train",
    "split_validation",
    "split_test",
    "split_seed",
    "not_answerable_target",
    "agreement_rule",
    "agreement_use_boxes",
    "agreement_iou_threshold",
)


@functools.cache
def code_version() -> str:
    """``git describe`` of the checkout when git is there, else the package version."""
    try:
        out = subprocess.run(
            ["git", "describe", "--tags", "--always", "--dirty"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        if out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return metadata.version("screenqa-annotation")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def agreement_shares(*, project: Project) -> dict[str, Any]:
    """Shares of validation/test questions whose answers all / two / none agree (dropped ones included)."""
    rows = dict(
        Question.objects.filter(screen__project=project, screen__split__in=["validation", "test"])
        .exclude(agreement="")
        .values_list("agreement")
        .annotate(n=Count("pk"))
        .values_list("agreement", "n")
    )
    total = sum(rows.values())
    return {
        "questions": total,
        "counts": {key: rows.get(key, 0) for key in ("all", "two", "none")},
        "shares": {key: round(rows.get(key, 0) / total, 4) if total else None for key in ("all", "two", "none")},
    }


def dropped_counts(*, project: Project) -> dict[str, dict[str, int]]:
    questions = (
        Question.objects.filter(screen__project=project, state=QuestionState.DROPPED)
        .values_list("drop_reason")
        .annotate(n=Count("pk"))
        .values_list("drop_reason", "n")
    )
    answers = (
        Answer.objects.filter(question__screen__project=project, kept=False)
        .values_list("drop_reason")
        .annotate(n=Count("pk"))
        .values_list("drop_reason", "n")
    )
    return {"questions": dict(sorted(questions)), "answers": dict(sorted(answers))}


def manifest_build(*, project: Project, fmt: str, written: WrittenFiles) -> dict[str, Any]:
    totals: dict[str, int] = {}
    for split in SPLITS:
        for key, value in written.counts[split].items():
            totals[key] = totals.get(key, 0) + value
    return {
        "manifest_version": MANIFEST_VERSION,
        "format": fmt,
        "project": project.slug,
        "code_version": code_version(),
        "counts": {**written.counts, "total": totals},
        "settings": {name: getattr(project, name) for name in PROJECT_SETTINGS},
        "agreement": agreement_shares(project=project),
        "dropped": dropped_counts(project=project),
        # Quality control: per stage, whose work is in the release and on what evidence, what quality
        # control withdrew and why; app-language drops apart; control accuracy; reviews.
        "quality": release_quality_figures(project=project),
        # Model assistance: per split, answers accepted from a suggestion unchanged (docs/assist.md).
        "assist": release_assist_figures(project=project),
        # Kept questions on screens without a split cannot be placed in any file: say so.
        "kept_without_split": Question.objects.filter(screen__project=project, state=QuestionState.KEPT)
        .exclude(screen__split__in=SPLITS)
        .count(),
        "files": dict(sorted(written.files.items())),
    }


def manifest_write(*, out_dir: Path, manifest: dict[str, Any]) -> None:
    with atomic_writer(Path(out_dir) / MANIFEST_NAME) as out:
        out.write(json.dumps(manifest, indent=2, sort_keys=True) + "\n")

"""Consensus: quality signals from the annotators' agreement with each other (docs/quality.md).

* **Agreement with the majority** (``majority_of``). Validation and test questions get several
  answers (3 by default); on each question with a majority (the largest group of pairwise-agreeing
  answers under the project's agreement rule, ``pipeline.decisions.agreement``, holding more than half
  of them), an answer agrees when it is in that group. The lead's report counts it per annotator
  (``pipeline.quality.report``).
* **Dawid–Skene.** When pre-filtering takes several judgments per screen (``prefilter_judgments``
  > 1), ``prefilter_dawid_skene`` estimates each judge's confusion matrix and each screen's class
  (the pair of judgments: ``ok``, ``out_of_sync``, ``non_english``, ``both``) by expectation
  maximisation, and reports each judge's estimated accuracy: the release manifest's quality section
  carries it (``pipeline.quality.release``). The screens' decisions weigh each judge's vote by their
  reliability read from gold (``pipeline.stages.prefilter.judge_weights``: the one-coin form,
  cheap enough for every decision); the EM estimate is the cross-check a lead reads, with no gold
  needed. Implemented here (``dawid_skene``, pure Python): the crowd-kit library (1.4.2) would bring
  transformers, tokenizers, huggingface-hub, pyarrow, pandas and scikit-learn into the runtime for
  this one algorithm.

Both read every answer or judgment, including those quality control withdrew: a figure about
annotators, not about the release.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.models import PrefilterJudgment, Project
from pipeline.decisions.agreement import AgreementSettings, AnswerView, agreement_group

MULTI_ANSWER_SPLITS = ("validation", "test")


def majority_of(views: Sequence[AnswerView], *, settings: AgreementSettings) -> set[int]:
    """The positions of the answers that form the majority of a question's ``views``: the
    largest group of pairwise-agreeing answers when it holds more than half of them (else none,
    e.g. a tie)."""
    group = agreement_group(list(views), settings=settings).group
    return set(group) if len(group) * 2 > len(views) else set()


@dataclass(frozen=True)
class DawidSkene:
    """The result of ``dawid_skene``: each item's most likely class and its posterior, each
    worker's confusion matrix (``confusion[worker][true][given]``) and estimated accuracy (the
    chance their label is the true class, weighted by the class priors), the priors."""

    labels: dict[Hashable, Hashable]
    posteriors: dict[Hashable, dict[Hashable, float]]
    confusion: dict[Hashable, dict[Hashable, dict[Hashable, float]]]
    accuracy: dict[Hashable, float]
    priors: dict[Hashable, float]
    iterations: int


def dawid_skene(
    votes: Iterable[tuple[Hashable, Hashable, Hashable]], *, max_iterations: int = 100, tolerance: float = 1e-6
) -> DawidSkene:
    """Dawid & Skene (1979): ``votes`` are ``(item, worker, label)``. Starts from the majority vote
    (soft), then alternates the M step (class priors and each worker's confusion matrix, with
    add-0.01 smoothing so no probability is 0) and the E step (each item's posterior over the
    classes), until the posteriors move less than ``tolerance``."""
    by_item: dict[Hashable, list[tuple[Hashable, Hashable]]] = defaultdict(list)
    for item, worker, label in votes:
        by_item[item].append((worker, label))
    classes = sorted({label for rows in by_item.values() for _, label in rows}, key=repr)
    workers = sorted({worker for rows in by_item.values() for worker, _ in rows}, key=repr)
    posterior: dict[Hashable, dict[Hashable, float]] = {}
    for item, rows in by_item.items():
        counts = Counter(label for _, label in rows)
        posterior[item] = {k: counts[k] / len(rows) for k in classes}
    smoothing = 0.01
    priors: dict[Hashable, float] = {}
    confusion: dict[Hashable, dict[Hashable, dict[Hashable, float]]] = {}
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        # M step
        priors = {k: sum(p[k] for p in posterior.values()) / len(posterior) for k in classes}
        tally = {w: {k: dict.fromkeys(classes, smoothing) for k in classes} for w in workers}
        for item, rows in by_item.items():
            for worker, label in rows:
                for k in classes:
                    tally[worker][k][label] += posterior[item][k]
        confusion = {
            w: {k: {g: v / sum(row.values()) for g, v in row.items()} for k, row in matrix.items()}
            for w, matrix in tally.items()
        }
        # E step (in logs: many votes per item would underflow)
        moved = 0.0
        for item, rows in by_item.items():
            logs = {
                k: math.log(max(priors[k], 1e-12)) + sum(math.log(confusion[w][k][g]) for w, g in rows) for k in classes
            }
            top = max(logs.values())
            weights = {k: math.exp(v - top) for k, v in logs.items()}
            total = sum(weights.values())
            new = {k: v / total for k, v in weights.items()}
            moved = max(moved, max(abs(new[k] - posterior[item][k]) for k in classes))
            posterior[item] = new
        if moved < tolerance:
            break
    accuracy = {w: sum(priors[k] * confusion[w][k][k] for k in classes) for w in workers}
    labels: dict[Hashable, Hashable] = {}
    for item, p in posterior.items():
        labels[item] = max(classes, key=lambda k: p[k])
    return DawidSkene(
        labels=labels,
        posteriors=posterior,
        confusion=confusion,
        accuracy=accuracy,
        priors=priors,
        iterations=iterations,
    )


def prefilter_class(*, non_english_app: bool, vh_out_of_sync: bool) -> str:
    """A pre-filtering judgment as one class of the pair of flags."""
    return {(False, False): "ok", (False, True): "out_of_sync", (True, False): "non_english"}.get(
        (non_english_app, vh_out_of_sync), "both"
    )


def prefilter_dawid_skene(*, project: Project) -> dict[str, Any] | None:
    """Each pre-filtering judge's estimated accuracy by Dawid–Skene over the screens with at least
    two judgments, or ``None`` when the project takes one judgment per screen. ``{"screens",
    "judges": {user_id: {"judgments", "accuracy"}}, "classes": {class: screens}, "iterations"}``."""
    if project.prefilter_judgments <= 1:
        return None
    rows = list(
        PrefilterJudgment.objects.filter(screen__project=project).values_list(
            "screen_id", "annotator_id", "non_english_app", "vh_out_of_sync"
        )
    )
    per_screen = Counter(screen for screen, *_ in rows)
    votes = [
        (screen, judge, prefilter_class(non_english_app=ne, vh_out_of_sync=sync))
        for screen, judge, ne, sync in rows
        if per_screen[screen] >= 2
    ]
    if not votes:
        return {"screens": 0, "judges": {}, "classes": {}, "iterations": 0}
    result = dawid_skene(votes)
    judged = Counter(judge for _, judge, _ in votes)
    return {
        "screens": len(result.labels),
        "judges": {
            judge: {"judgments": judged[judge], "accuracy": round(result.accuracy[judge], 4)}
            for judge in sorted(judged)
        },
        "classes": dict(sorted(Counter(str(label) for label in result.labels.values()).items())),
        "iterations": result.iterations,
    }

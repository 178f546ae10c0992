"""SQA-UIC (element texts) and SQA-UIC-BB (element texts with boxes).

SQA-UIC, no normalisation (texts compared exactly):
- EM: the predicted list equals one rater's list, in order;
- F1: multiset F1 with items as tokens (``Counter`` intersection), best over raters;
- an empty prediction scores 1 iff some rater's list is empty (and a non-empty one scores 0 against
  an empty list).

SQA-UIC-BB, boxes ``[left, top, right, bottom]`` in screenshot pixels:
- box F1: one-to-one matching of predicted and rater boxes (Hungarian, ``linear_sum_assignment``);
  a pair can match only at IoU >= threshold (0.1, FORMATS.md; PIPELINE.md says "> 0.1", the formats
  page is the scoring contract). The assignment maximises the number of matched pairs first and their
  total IoU second; precision = matches / predicted, recall = matches / rater;
- EM: same length, and pair by pair in order: equal text and IoU >= threshold;
- F1: a second one-to-one matching where a pair is worth its IoU if the texts are equal (and the IoU
  reaches the threshold), else 0; soft true positives = the sum of the matched worths, then
  precision / recall / F1 as above;
- each of the three is the best over raters, independently; empty lists as for SQA-UIC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

IOU_THRESHOLD = 0.1

Box = Sequence[float]


@dataclass(frozen=True)
class Element:
    text: str
    bounds: tuple[float, float, float, float] | None = None


def _f1(true_positives: float, n_pred: int, n_gold: int) -> float:
    if n_pred == 0 or n_gold == 0:
        return float(n_pred == n_gold)
    if true_positives <= 0:
        return 0.0
    precision = true_positives / n_pred
    recall = true_positives / n_gold
    return 2 * precision * recall / (precision + recall)


def uic_scores(predicted: Sequence[str], raters: Sequence[Sequence[str]]) -> tuple[float, float]:
    """``(em, f1)`` of predicted element texts against the raters' lists (best over raters)."""
    pred = list(predicted)
    pred_counts = Counter(pred)
    best_em = best_f1 = 0.0
    for rater in raters:
        gold = list(rater)
        if pred == gold:
            return 1.0, 1.0
        common = sum((pred_counts & Counter(gold)).values())
        best_f1 = max(best_f1, _f1(common, len(pred), len(gold)))
    return best_em, best_f1


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``[l, t, r, b]`` boxes; degenerate boxes have area 0."""
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    area_a = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
    area_b = max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def _assign(weights: list[list[float]]) -> list[tuple[int, int]]:
    """Maximum-weight one-to-one pairs with positive weight (Hungarian)."""
    if not weights or not weights[0]:
        return []
    # Small inputs (the usual one or two boxes) need no solver; larger go to scipy.
    if len(weights) == 1:
        row = weights[0]
        j = max(range(len(row)), key=row.__getitem__)
        return [(0, j)] if row[j] > 0 else []
    if len(weights[0]) == 1:
        i = max(range(len(weights)), key=lambda r: weights[r][0])
        return [(i, 0)] if weights[i][0] > 0 else []
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    matrix = np.asarray(weights, dtype=float)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if matrix[r, c] > 0]


def uic_bb_scores(
    predicted: Sequence[Element], raters: Sequence[Sequence[Element]], *, threshold: float = IOU_THRESHOLD
) -> tuple[float, float, float]:
    """``(bbox_f1, em, f1)`` of predicted elements with boxes, each the best over raters.

    Every element must have ``bounds`` (the caller checks); see the module docstring for the rules.
    """
    best_box = best_em = best_f1 = 0.0
    n_pred = len(predicted)
    for rater in raters:
        n_gold = len(rater)
        if n_pred == 0 or n_gold == 0:
            same = float(n_pred == n_gold)
            best_box, best_em, best_f1 = max(best_box, same), max(best_em, same), max(best_f1, same)
            continue
        ious = [[iou(p.bounds, g.bounds) for g in rater] for p in predicted]  # type: ignore[arg-type]
        valid = [[v if v >= threshold else 0.0 for v in row] for row in ious]
        # Count first, IoU second: a weight of (k + iou) for k > min(n, m) makes one more pair
        # always worth more than any gain in total IoU.
        k = min(n_pred, n_gold) + 1.0
        box_pairs = _assign([[k + v if v > 0 else 0.0 for v in row] for row in valid])
        best_box = max(best_box, _f1(len(box_pairs), n_pred, n_gold))
        text_weights = [
            [v if v > 0 and p.text == g.text else 0.0 for v, g in zip(row, rater, strict=True)]
            for row, p in zip(valid, predicted, strict=True)
        ]
        soft = sum(text_weights[i][j] for i, j in _assign(text_weights))
        best_f1 = max(best_f1, _f1(soft, n_pred, n_gold))
        if n_pred == n_gold and all(text_weights[i][i] > 0 for i in range(n_pred)):
            best_em = 1.0
    return best_box, best_em, best_f1

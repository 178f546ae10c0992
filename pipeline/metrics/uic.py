"""SQA-UIC (element texts) and SQA-UIC-BB (element texts with boxes).

The contract is the release's own scoring code (``sqa_uic_metrics`` / ``sqa_uic_bb_metrics`` in
google-research-datasets/screen_qa ``code/metrics.py``); tests/pipeline/metrics/test_reference.py
checks every per-example figure against it. Both metrics start the same way:

- an empty prediction scores 1 on every figure iff some rater's list is empty, else 0;
- for a non-empty prediction the empty rater lists are dropped (none left: 0);
- every figure is then the best over the remaining raters, each figure independently.

SQA-UIC, texts compared exactly (no normalisation): EM = the predicted list equals one rater's list,
in order; F1 = multiset F1 with whole items as tokens (``Counter`` intersection).

SQA-UIC-BB, boxes ``[left, top, right, bottom]`` in screenshot pixels (the reference's docstring says
``(ymin, xmin, ymax, xmax)``; IoU is the same number in either order, see ``iou``):

- box F1: a pair's score is its IoU, kept when >= the threshold (0.1) and 0 otherwise; one-to-one
  pairs are chosen by a *maximum total score* assignment (``scipy.optimize.linear_sum_assignment`` on
  the negated matrix, exactly as the reference, so ties are broken the same way); the assigned pairs
  whose score reaches the threshold are the matches; precision = matches / predicted, recall =
  matches / rater. A larger total IoU wins over more pairs: this is the release's choice, kept.
- EM: same length and, pair by pair in order, equal text and IoU >= the threshold;
- F1: box F1 again, with a pair's score its IoU when the texts are equal and 0 otherwise. It counts
  matched pairs; it does not sum IoUs.
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


def _f1(matches: float, n_pred: int, n_gold: int) -> float:
    """F1 from a match count; both lengths positive. Operation for operation the reference's."""
    if matches <= 0:
        return 0.0
    precision = matches / n_pred
    recall = matches / n_gold
    return 2 * precision * recall / (precision + recall)


def uic_scores(predicted: Sequence[str], raters: Sequence[Sequence[str]]) -> tuple[float, float]:
    """``(em, f1)`` of predicted element texts against the raters' lists (the module docstring's rules)."""
    pred = list(predicted)
    if not pred:
        hit = float(any(not rater for rater in raters))
        return hit, hit
    pred_counts = Counter(pred)
    best_em = best_f1 = 0.0
    for rater in raters:
        if not rater:
            continue
        gold = list(rater)
        if pred == gold:
            return 1.0, 1.0
        common = sum((pred_counts & Counter(gold)).values())
        best_f1 = max(best_f1, _f1(common, len(pred), len(gold)))
    return best_em, best_f1


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``[l, t, r, b]`` boxes; 0 when they do not overlap.

    The expression is the reference's (width x height of the intersection, area = width x height,
    union = area_a + area_b - intersection), so the value is the same float for the same input
    numbers, and ties in the assignment are broken as there. An inverted or zero-area box never
    overlaps anything (its intersection with any box has no positive extent), so its area is never
    needed and the result is 0, as in the reference.
    """
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    if inter == 0:
        return 0.0
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    return inter / (area_a + area_b - inter)


def matched_pairs(scores: Sequence[Sequence[float]], threshold: float) -> int:
    """Matches of the release's ``uic_bb_f1_score``: pairs scoring >= ``threshold`` in a maximum-total assignment.

    ``scores`` is a non-empty predicted x rater matrix of pair scores (IoUs, or 0). Scores under the
    threshold count 0 in the assignment. When the result cannot depend on which optimal assignment is
    found (one row, one column, or valid pairs that share no row and no column) it is counted
    directly; otherwise scipy solves the same matrix the reference solves.
    """
    valid = [[s if s >= threshold else 0.0 for s in row] for row in scores]
    if threshold > 0:
        cells = [(i, j) for i, row in enumerate(valid) for j, s in enumerate(row) if s > 0]
        if not cells:
            return 0
        if len(valid) == 1 or len(valid[0]) == 1:
            return 1
        rows = {i for i, _ in cells}
        cols = {j for _, j in cells}
        if len(rows) == len(cols) == len(cells):
            # Every valid pair is alone in its row and column: any maximum assignment takes them all.
            return len(cells)
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    matrix = np.asarray(valid, dtype=float)
    row_index, col_index = linear_sum_assignment(-matrix)
    return int((matrix[row_index, col_index] >= threshold).sum())


def uic_bb_scores(
    predicted: Sequence[Element], raters: Sequence[Sequence[Element]], *, threshold: float = IOU_THRESHOLD
) -> tuple[float, float, float]:
    """``(bbox_f1, em, f1)`` of predicted elements with boxes, each the best over raters.

    Every element must have ``bounds`` (the caller checks); the module docstring states the rules.
    """
    if not predicted:
        hit = float(any(not rater for rater in raters))
        return hit, hit, hit
    best_box = best_em = best_f1 = 0.0
    n_pred = len(predicted)
    for rater in raters:
        n_gold = len(rater)
        if not n_gold:
            continue
        ious = [[iou(p.bounds, g.bounds) for g in rater] for p in predicted]  # type: ignore[arg-type]
        best_box = max(best_box, _f1(matched_pairs(ious, threshold), n_pred, n_gold))
        same_text = [[p.text == g.text for g in rater] for p in predicted]
        text_scores = [
            [v if same else 0.0 for v, same in zip(row, flags, strict=True)]
            for row, flags in zip(ious, same_text, strict=True)
        ]
        best_f1 = max(best_f1, _f1(matched_pairs(text_scores, threshold), n_pred, n_gold))
        if n_pred == n_gold and all(same_text[i][i] and ious[i][i] >= threshold for i in range(n_pred)):
            best_em = 1.0
    return best_box, best_em, best_f1

"""SQA-S: SQuAD exact match and token F1 over short answers, with the `<no answer>` rules.

The contract is the release's own scoring code (``sqa_s_metrics`` in google-research-datasets/screen_qa
``code/metrics.py``; tests/pipeline/metrics/test_reference.py checks every figure against it):

- a prediction that *is* the literal ``<no answer>`` (exactly: no stripping, no case folding, no
  ``<<<no answer>>>``) scores 1 (EM and F1) iff some ground truth is exactly ``<no answer>``, else 0;
- for any other prediction the ``<no answer>`` ground truths are dropped (none left scores 0);
- then SQuAD normalisation (lower-case, remove ``string.punctuation``, remove the articles a/an/the,
  squeeze whitespace); EM: the normalised prediction equals some normalised ground truth; F1: the best
  token-bag F1, which is 0 whenever the prediction (or that ground truth) has no token left. So a
  prediction and a ground truth that both normalise to nothing ("$", "The") score EM 1 and F1 0.

Model outputs such as the v2 prompt's ``<<<no answer>>>`` are text to this metric: map them to
``<no answer>`` before scoring (docs/scoring.md).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

NO_ANSWER = "<no answer>"
_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def is_no_answer(text: str) -> bool:
    """Whether ``text`` is the no-answer literal (exact comparison, as the release's code)."""
    return text == NO_ANSWER


def normalize_answer(text: str) -> str:
    """SQuAD's normalize_answer (the punctuation is removed before the articles, as there)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT_TABLE)).split())


def _overlap_f1(pred_counts: dict[str, int], n_pred: int, gold_tokens: list[str]) -> float:
    """Token-bag F1 (SQuAD's ``Counter`` intersection, done with a dict copy: faster for short answers).

    The arithmetic is the reference's, operation for operation, so the figures are bit-identical.
    """
    remaining = dict(pred_counts)
    same = 0
    for token in gold_tokens:
        left = remaining.get(token)
        if left:
            remaining[token] = left - 1
            same += 1
    if same == 0:
        return 0.0
    precision = same / n_pred
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_scores(prediction: str, ground_truths: Sequence[str]) -> tuple[float, float]:
    """``(em, f1)`` of one short-answer prediction against its acceptable answers."""
    if prediction == NO_ANSWER:
        hit = float(NO_ANSWER in ground_truths)
        return hit, hit
    golds = [normalize_answer(g) for g in ground_truths if g != NO_ANSWER]
    if not golds:
        return 0.0, 0.0
    pred = normalize_answer(prediction)
    pred_tokens = pred.split()
    if not pred_tokens:
        # Nothing left to compare token by token: EM can still be 1 (a ground truth that also
        # normalises to ""), F1 is 0 (no token in common), as in the release's f1_score.
        return float(pred in golds), 0.0
    if pred in golds:
        return 1.0, 1.0
    pred_counts = Counter(pred_tokens)
    n_pred = len(pred_tokens)
    best = 0.0
    for gold in golds:
        gold_tokens = gold.split()
        if gold_tokens:
            best = max(best, _overlap_f1(pred_counts, n_pred, gold_tokens))
    return 0.0, best

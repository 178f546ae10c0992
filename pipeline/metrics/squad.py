"""SQA-S: SQuAD exact match and token F1 over short answers, with the `<no answer>` rules.

Normalisation is the official SQuAD one: lower-case, remove punctuation (``string.punctuation``),
remove the articles a/an/the, squeeze whitespace. Rules of FORMATS.md section 3:

- EM: the normalised prediction equals some normalised ground truth; F1: the best token-bag F1;
- a `<no answer>` prediction scores 1 (EM and F1) iff some ground truth is `<no answer>`, else 0;
- for any other prediction the `<no answer>` ground truths are ignored (only the answers count;
  none left scores 0);
- a prediction is `<no answer>` when, stripped and lower-cased, it is ``<no answer>`` or the v2
  paper's model output ``<<<no answer>>>``. An empty prediction is *not* a no-answer: it is text
  that normalises to nothing (F1 1 only against a ground truth that also normalises to nothing,
  as in the SQuAD v2 script).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

NO_ANSWER = "<no answer>"
_NO_ANSWER_FORMS = frozenset({"<no answer>", "<<<no answer>>>"})
_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def is_no_answer(text: str) -> bool:
    return text.strip().lower() in _NO_ANSWER_FORMS


def normalize_answer(text: str) -> str:
    """SQuAD's normalize_answer (the punctuation is removed before the articles, as there)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT_TABLE)).split())


def _overlap_f1(pred_counts: dict[str, int], n_pred: int, gold_tokens: list[str]) -> float:
    """Token-bag F1 (SQuAD's ``Counter`` intersection, done with a dict copy: faster for short answers)."""
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
    if is_no_answer(prediction):
        hit = float(any(is_no_answer(g) for g in ground_truths))
        return hit, hit
    golds = [normalize_answer(g) for g in ground_truths if not is_no_answer(g)]
    if not golds:
        return 0.0, 0.0
    pred = normalize_answer(prediction)
    if pred in golds:
        return 1.0, 1.0
    pred_tokens = pred.split()
    if not pred_tokens:
        # SQuAD v2: an empty side scores 1 only against an empty side (handled by the EM check above).
        return 0.0, 0.0
    pred_counts = Counter(pred_tokens)
    n_pred = len(pred_tokens)
    best = 0.0
    for gold in golds:
        gold_tokens = gold.split()
        if gold_tokens:
            best = max(best, _overlap_f1(pred_counts, n_pred, gold_tokens))
    return 0.0, best

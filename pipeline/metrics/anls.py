"""ANLS (Average Normalized Levenshtein Similarity) for DocVQA-format files.

Per question: ``max`` over the acceptable answers of ``1 - NL`` when ``NL < 0.5`` else 0, where
``NL = levenshtein(a, p) / max(len(a), len(p))`` (tau = 0.5, as in the ST-VQA / DocVQA evaluation).
Answers are not case sensitive; leading/trailing whitespace is ignored and inner runs of
whitespace are squeezed to one space, as the official evaluation script does (it is otherwise
space sensitive: "12/15 /88" differs from "12/15/88"). Two empty strings are identical (1.0).
"""

from __future__ import annotations

from collections.abc import Sequence

ANLS_THRESHOLD = 0.5


def _clean(text: str) -> str:
    return " ".join(text.strip().lower().split())


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute all cost 1)."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def anls_score(prediction: str, answers: Sequence[str], *, threshold: float = ANLS_THRESHOLD) -> float:
    """The per-question ANLS term (0 when there are no answers)."""
    pred = _clean(prediction)
    best = 0.0
    for answer in answers:
        gold = _clean(answer)
        longest = max(len(gold), len(pred))
        if longest == 0:
            return 1.0
        nl = levenshtein(gold, pred) / longest
        if nl < threshold:
            best = max(best, 1.0 - nl)
    return best

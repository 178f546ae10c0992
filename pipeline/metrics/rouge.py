"""SQA-L: ROUGE-1/2/L F-measures of a full-sentence answer, from the ``rouge-score`` package.

The package's defaults are kept (its own tokenizer, no stemming), so the figures are what
``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])`` prints. Best over raters,
each measure independently. The scorer is built once (lazily: the package loads nltk).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@cache
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES))


def rouge_scores(prediction: str, references: Sequence[str]) -> dict[str, float]:
    """``{"rouge1", "rouge2", "rougeL"}`` F-measures, each the best over ``references`` (0 if none)."""
    best = dict.fromkeys(ROUGE_TYPES, 0.0)
    scorer = _scorer()
    for reference in references:
        scores = scorer.score(reference, prediction)
        for name in ROUGE_TYPES:
            best[name] = max(best[name], scores[name].fmeasure)
    return best

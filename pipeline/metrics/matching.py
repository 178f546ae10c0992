"""Answer matching, nDCG_v and item F1 (ScreenQA paper v1, sections 2.3.1-2.3.3).

The unit of scoring is the *item* (one UI element text of an answer list), but predicted and
ground-truth lists may segment the same screen text differently ("Deep Squat, 3 sets" vs
"Deep Squat" + "3 sets"). Answer matching turns both lists into hit/miss flags that tolerate this:

1. concatenate the tokens of all predicted items into one sequence, remembering which item each
   token came from (the paper's A^c, initially one segment);
2. for each ground-truth item ``g`` in order, look for its token sequence as a contiguous run inside
   the remaining segments (first segment, first occurrence). Found: ``g`` is a HIT, the tokens of the
   run are marked, the run is removed and its segment is split into the parts before and after it
   (a later ``g`` can never match across the gap). Not found: ``g`` is a MISS;
3. a predicted item with at least one marked token is a HIT.

Tokens. The paper's worked example uses characters as word tokens ("each capitalised character is
a word token"). For real text a token is a *word after normalisation*: lower-cased, punctuation
removed (any non-word, non-space character, and ``_``), split on whitespace (see ``word_tokens``).
Articles are kept: an element text is matched as shown on screen, only case and punctuation are
forgiven. The tokenizer is a keyword parameter, so ``char_tokens`` reproduces the paper verbatim.

Conventions the paper leaves open (chosen here, documented in docs/scoring.md):
- a ground-truth item with no tokens (empty or punctuation only) is a MISS;
- both lists empty (a not-answerable question answered with nothing) scores 1.0 for nDCG_v and F1;
  exactly one of them empty scores 0.0;
- nDCG_v is clamped to 1.0: with answer matching one ground-truth item can make several predicted
  items hits (a prediction that splits one element in two), which would push DCG above IDCG; the
  paper states nDCG_v stays in [0, 1].
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

Tokenizer = Callable[[str], list[str]]

_NON_WORD = re.compile(r"[^\w\s]|_")


def word_tokens(text: str) -> list[str]:
    """Default tokenizer: lower-case, drop punctuation, split on whitespace."""
    return _NON_WORD.sub("", text.lower()).split()


def char_tokens(text: str) -> list[str]:
    """Every non-space character is a token (the paper's worked example)."""
    return [c for c in text if not c.isspace()]


def _find_run(tokens: list[str], run: list[str]) -> int:
    """Index of the first occurrence of ``run`` as a contiguous sublist of ``tokens``, else -1."""
    n, m = len(tokens), len(run)
    if m == 0 or m > n:
        return -1
    first = run[0]
    start = 0
    last_start = n - m
    while start <= last_start:
        try:
            i = tokens.index(first, start, last_start + 1)
        except ValueError:
            return -1
        if tokens[i : i + m] == run:
            return i
        start = i + 1
    return -1


def answer_match(
    predicted: Sequence[str],
    ground_truth: Sequence[str],
    *,
    tokenize: Tokenizer = word_tokens,
) -> tuple[list[int], list[int]]:
    """Hits for each predicted item and for each ground-truth item (paper v1, 2.3.3).

    Returns ``(predicted_hits, ground_truth_hits)``: lists of 0/1 with the lengths of the inputs.
    Not order invariant (the paper accepts this): ground-truth items are matched in their order.
    Pure function; deterministic.
    """
    # A^c as a list of segments; each segment is (tokens, owning predicted item per token).
    all_tokens: list[str] = []
    owners: list[int] = []
    for index, item in enumerate(predicted):
        toks = tokenize(item)
        all_tokens.extend(toks)
        owners.extend([index] * len(toks))
    segments: list[tuple[list[str], list[int]]] = [(all_tokens, owners)] if all_tokens else []

    predicted_hits = [0] * len(predicted)
    ground_truth_hits = [0] * len(ground_truth)
    for g_index, g in enumerate(ground_truth):
        run = tokenize(g)
        if not run:
            continue
        for s_index, (tokens, token_owners) in enumerate(segments):
            at = _find_run(tokens, run)
            if at < 0:
                continue
            ground_truth_hits[g_index] = 1
            end = at + len(run)
            for owner in token_owners[at:end]:
                predicted_hits[owner] = 1
            # Remove the matched run and split the segment around it (empty parts are dropped).
            parts = [(tokens[:at], token_owners[:at]), (tokens[end:], token_owners[end:])]
            segments[s_index : s_index + 1] = [p for p in parts if p[0]]
            break
    return predicted_hits, ground_truth_hits


def _ideal_dcg(n: int) -> float:
    return sum(1.0 / math.log2(i + 1) for i in range(1, n + 1))


def ndcg_from_hits(predicted_hits: Sequence[int], n_ground_truth: int) -> float:
    """nDCG_v (eq. 1-3) from predicted hit flags; clamped to [0, 1], empty-list conventions as above."""
    if n_ground_truth == 0:
        return 1.0 if not predicted_hits else 0.0
    dcg = sum(r / math.log2(i + 1) for i, r in enumerate(predicted_hits, start=1) if r)
    return min(1.0, dcg / _ideal_dcg(n_ground_truth))


def f1_from_hits(predicted_hits: Sequence[int], ground_truth_hits: Sequence[int]) -> float:
    """Item F1 (eq. 5): precision over predicted items, recall over ground-truth items."""
    if not predicted_hits or not ground_truth_hits:
        return 1.0 if not predicted_hits and not ground_truth_hits else 0.0
    precision = sum(predicted_hits) / len(predicted_hits)
    recall = sum(ground_truth_hits) / len(ground_truth_hits)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def ndcg_v(predicted: Sequence[str], ground_truth: Sequence[str], *, tokenize: Tokenizer = word_tokens) -> float:
    """nDCG at varying positions (eq. 1-3) of one prediction against one ground-truth list."""
    predicted_hits, _ = answer_match(predicted, ground_truth, tokenize=tokenize)
    return ndcg_from_hits(predicted_hits, len(ground_truth))


def item_f1(predicted: Sequence[str], ground_truth: Sequence[str], *, tokenize: Tokenizer = word_tokens) -> float:
    """Item F1 (eq. 5) of one prediction against one ground-truth list, with answer matching."""
    predicted_hits, ground_truth_hits = answer_match(predicted, ground_truth, tokenize=tokenize)
    return f1_from_hits(predicted_hits, ground_truth_hits)


def answer_matching_best(
    predicted: Sequence[str],
    raters: Sequence[Sequence[str]],
    *,
    tokenize: Tokenizer = word_tokens,
) -> tuple[float, float]:
    """``(max_j nDCG_v, max_j F1)`` over the raters' lists (the per-example terms of eq. 4 and 5).

    The two maxima are taken independently, as in the paper. No raters scores ``(0.0, 0.0)``.
    """
    best_ndcg = best_f1 = 0.0
    for ground_truth in raters:
        predicted_hits, ground_truth_hits = answer_match(predicted, ground_truth, tokenize=tokenize)
        best_ndcg = max(best_ndcg, ndcg_from_hits(predicted_hits, len(ground_truth)))
        best_f1 = max(best_f1, f1_from_hits(predicted_hits, ground_truth_hits))
    return best_ndcg, best_f1

"""Agreement between the answers of one question (docs/postprocessing.md).

Pure functions over plain values: no database, so the rules are testable case by case
and the post-processing service feeds them from prefetched rows.

Two rules (``Project.agreement_rule``); both compare element texts under the paper's answer
matching (v1 2.3.3, ``pipeline.metrics.matching.answer_match``) over normalised texts
(``agreement_tokens``), so case, punctuation and a different segmentation of the same words
never make two answers differ.

``release`` (the default, calibrated on the public release; the evidence is in the docs):

1. ``invalid`` agrees only with ``invalid``;
2. ``not_answerable`` agrees with ``not_answerable`` and with an ``answered`` answer that has
   elements (the release keeps a not-answerable vote beside text answers: an empty element
   list, and ``<no answer>`` among the short answers);
3. two ``answered`` answers agree when they **share an element**: the elements of one that
   are found in the other, and the elements of the other they land on, agree as in the strict
   rule (so ``["C Max", "2014"]`` and ``["C Max"]`` agree, as do ``["Facebook", "HERE"]`` and
   ``["Facebook", "Email"]``; ``["Lunge"]`` and ``["Lunge 3 sets"]``, or ``["★★"]`` and
   ``["★★★"]``, share no whole element and do not).

``strict``:

1. the verdicts are equal (``answered``, ``invalid`` or ``not_answerable``); and
2. for ``answered``: every element of each answer is a hit with each answer taken once as the
   prediction and once as the ground truth (the same words; a missing or extra element or
   word disagrees).

In both, an ``answered`` answer without any element agrees with nothing, and only when the
project sets ``agreement_use_boxes``, the compared elements' boxes must also agree: every box
of each side overlaps some box of the other at IoU >= ``agreement_iou_threshold`` (under
``release``, the shared elements' boxes).

The agreement of a question is the largest group of its answers that agree pairwise:
``all`` when every answer is in it, ``two`` when at least two but not all are (the
paper's "two agree"; with more than three answers it means "a partial group"), and
``none`` when no two answers agree or when two different groups of that largest size
exist (a tie: there is no single group to keep, so nothing is guessed).
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.metrics.matching import answer_match, char_tokens, word_tokens

ALL = "all"
TWO = "two"
NONE = "none"

# The values of ``annotation.models.AgreementRule`` (a test keeps the two in step).
RULE_RELEASE = "release"
RULE_STRICT = "strict"
RULES = (RULE_RELEASE, RULE_STRICT)

ANSWERED = "answered"
NOT_ANSWERABLE = "not_answerable"


@dataclass(frozen=True)
class AgreementSettings:
    """The project's agreement settings (``Project.agreement_rule`` / ``agreement_use_boxes`` /
    ``agreement_iou_threshold``)."""

    use_boxes: bool = False
    iou_threshold: float = 0.5
    rule: str = RULE_RELEASE

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown agreement rule {self.rule!r}; one of {', '.join(RULES)}")


@dataclass(frozen=True)
class ElementView:
    text: str
    bounds: tuple[int, int, int, int]


@dataclass(frozen=True)
class AnswerView:
    """What agreement needs of one answer; ``elements`` in the answer's order."""

    verdict: str
    elements: tuple[ElementView, ...] = ()


@dataclass(frozen=True)
class AgreementResult:
    """``group`` holds indexes into the answers given, in their order; empty when ``label`` is ``none``."""

    label: str
    group: tuple[int, ...]
    tie: bool = False


def agreement_tokens(text: str) -> list[str]:
    """The normalised tokens of an element text: case, punctuation, spacing and Unicode width do not count.

    NFKC and case folding ("Straße" = "STRASSE"), then the metric's word tokens (punctuation
    removed, split on spaces). A text made only of symbols ("★★★", "$") would have no word token
    and so never match anything, not even itself; it falls back to its characters.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = word_tokens(folded)
    if words:
        return words
    # Symbols ("$", "★") count, punctuation around them does not ("$." is "$"); a text of
    # punctuation only ("...", "-") keeps every character.
    symbols = [c for c in char_tokens(folded) if not unicodedata.category(c).startswith("P")]
    return symbols or char_tokens(folded)


def box_iou(a: Sequence[int], b: Sequence[int]) -> float:
    """Intersection over union of two ``[left, top, right, bottom]`` boxes (0 when either is empty)."""
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0, right - left) * max(0, bottom - top)
    area_a = max(0, a[2] - a[0]) * max(0, a[3] - a[1])
    area_b = max(0, b[2] - b[0]) * max(0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def _texts_agree(a: Sequence[ElementView], b: Sequence[ElementView]) -> bool:
    # Both directions: as ground truth, each answer's elements must all be found in the other's
    # text (one direction alone lets "★★" pass inside "★★★", or "Lunge" inside "Lunge 3 sets").
    texts_a, texts_b = [e.text for e in a], [e.text for e in b]
    for predicted, truth in ((texts_a, texts_b), (texts_b, texts_a)):
        hits_predicted, hits_truth = answer_match(predicted, truth, tokenize=agreement_tokens)
        if not (all(hits_predicted) and all(hits_truth)):
            return False
    return True


def _boxes_agree(a: Sequence[ElementView], b: Sequence[ElementView], threshold: float) -> bool:
    def covered(src: Sequence[ElementView], dst: Sequence[ElementView]) -> bool:
        return all(any(box_iou(s.bounds, d.bounds) >= threshold for d in dst) for s in src)

    return covered(a, b) and covered(b, a)


def _shared_elements(
    a: Sequence[ElementView], b: Sequence[ElementView]
) -> tuple[list[ElementView], list[ElementView]] | None:
    """The elements of ``b`` found in ``a``'s text, and the elements of ``a`` they land on, when
    those two parts agree under the strict text rule; else None.

    One answer matching (``a`` as the prediction, ``b`` as the ground truth) finds the shared
    part; the strict check on it refuses a part of one element ("Lunge" inside "Lunge 3 sets").
    """
    hits_a, hits_b = answer_match([e.text for e in a], [e.text for e in b], tokenize=agreement_tokens)
    part_b = [e for e, hit in zip(b, hits_b, strict=True) if hit]
    if not part_b:
        return None
    part_a = [e for e, hit in zip(a, hits_a, strict=True) if hit]
    return (part_a, part_b) if _texts_agree(part_a, part_b) else None


def _share_an_element(a: Sequence[ElementView], b: Sequence[ElementView], settings: AgreementSettings) -> bool:
    for x, y in ((a, b), (b, a)):
        shared = _shared_elements(x, y)
        if shared is not None and (not settings.use_boxes or _boxes_agree(*shared, settings.iou_threshold)):
            return True
    return False


def answers_agree(a: AnswerView, b: AnswerView, *, settings: AgreementSettings) -> bool:
    """Whether two answers of one question agree under the project's rule (the module docstring)."""
    if settings.rule == RULE_STRICT:
        if a.verdict != b.verdict:
            return False
        if a.verdict != ANSWERED:
            return True
        if not a.elements or not b.elements:
            return False
        if not _texts_agree(a.elements, b.elements):
            return False
        return not settings.use_boxes or _boxes_agree(a.elements, b.elements, settings.iou_threshold)
    # RULE_RELEASE
    if (a.verdict == ANSWERED and not a.elements) or (b.verdict == ANSWERED and not b.elements):
        return False
    if a.verdict != ANSWERED or b.verdict != ANSWERED:
        verdicts = {a.verdict, b.verdict}
        return len(verdicts) == 1 or verdicts == {ANSWERED, NOT_ANSWERABLE}
    return _share_an_element(a.elements, b.elements, settings)


def agreement_group(answers: Sequence[AnswerView], *, settings: AgreementSettings) -> AgreementResult:
    """The largest group of pairwise-agreeing answers and its label (``all`` / ``two`` / ``none``).

    Exhaustive over subsets, largest first: questions have a handful of answers (3 by
    default), and agreement need not be transitive (IoU, substring matches), so the
    largest clique is what "most answerers agree" means.
    """
    n = len(answers)
    if n < 2:
        return AgreementResult(label=NONE, group=())
    agree = {
        (i, j): answers_agree(answers[i], answers[j], settings=settings) for i, j in itertools.combinations(range(n), 2)
    }
    for size in range(n, 1, -1):
        groups = [
            combo
            for combo in itertools.combinations(range(n), size)
            if all(agree[pair] for pair in itertools.combinations(combo, 2))
        ]
        if len(groups) > 1:
            return AgreementResult(label=NONE, group=(), tie=True)
        if groups:
            return AgreementResult(label=ALL if size == n else TWO, group=groups[0])
    return AgreementResult(label=NONE, group=())

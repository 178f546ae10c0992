"""The live writing hints shown while a writer types a question (an htmx partial of the workspace).

``question_hints`` is pure: near duplicates of a question already on the screen, and questions
that break the writing rules of the question stages. They are advice, never a refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

# Two questions whose normalised texts are this similar are flagged as near duplicates.
DUPLICATE_RATIO = 0.82


_WORD = re.compile(r"[a-z0-9]+")


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Hint:
    kind: str
    message: str


_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (
        "counting",
        re.compile(r"\b(how many|number of|count|total (number|count))\b", re.I),
        "Looks like counting: answers must be read off the screen, not counted.",
    ),
    (
        "arithmetic",
        re.compile(
            r"\b(sum|add up|plus|minus|difference between|average|total of|multipl|divid|percent(age)? of)\b", re.I
        ),
        "Looks like arithmetic: no calculation, the answer must be printed on the screen.",
    ),
    (
        "comparison",
        re.compile(
            r"\b(more|less|fewer|higher|lower|cheaper|bigger|smaller|larger|older|newer|longer|shorter|greater)\b"
            r".*\bthan\b|\b(most|least|highest|lowest|cheapest|biggest|smallest|largest|best|worst)\b",
            re.I,
        ),
        "Looks like a comparison: no comparing values across the screen.",
    ),
    (
        "yes-no",
        re.compile(r"^\s*(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|am)\b|^\s*why\b", re.I),
        "Yes/no or why question: only when the screen states the answer itself.",
    ),
    (
        "ad",
        re.compile(r"\b(ad|ads|advert\w*|sponsor\w*|promot\w*|banner)\b", re.I),
        "About an ad? Questions about advertisements are not allowed.",
    ),
]


def question_hints(text: str, *, others: list[str]) -> list[Hint]:
    """Hints for one question as typed, against the ``others`` already on this screen.

    Near duplicate: normalised texts (lower-case words) with a similarity ratio of at
    least ``DUPLICATE_RATIO`` (difflib), or the same bag of words.
    """
    text = text.strip()
    if len(text) < 4:
        return []
    hints: list[Hint] = []
    norm = _normalise(text)
    for other in others:
        other_norm = _normalise(other)
        if not other_norm:
            continue
        same_words = sorted(norm.split()) == sorted(other_norm.split())
        if same_words or SequenceMatcher(None, norm, other_norm).ratio() >= DUPLICATE_RATIO:
            hints.append(Hint("duplicate", f"Near duplicate of “{other.strip()}”."))
            break
    for kind, pattern, message in _RULES:
        if pattern.search(text):
            hints.append(Hint(kind, message))
    return hints

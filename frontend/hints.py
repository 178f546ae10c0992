"""The live writing hints shown while a writer types a question (an htmx partial of the workspace).

``question_hints`` is pure: near duplicates of a question already on the screen, and questions
that break the writing rules of the question stages. They are advice, never a refusal. A hint's
``kind`` is the code of the rule among the questions stage's ``review_reasons`` (the scripted crowd's
pass-2 writers flag pass-1 questions with it, ``devtools.crowd``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

# Two questions whose normalised texts are this similar are flagged as near duplicates.
DUPLICATE_RATIO = 0.82


_WORD = re.compile(r"[a-z0-9]+")


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Hint:
    kind: str
    message: str


# Word-level rules: a question is split into lower-case words, and text in double quotes (a label
# copied off the screen: "Most popular", "Promotional Messages") is left out first. Each rule is a
# function of the words; tests/frontend/test_hints.py measures them on the real ScreenQA questions
# (all accepted by the original annotation, so every hint there is a false alarm).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Words after which "number of" names an identifier, not a count ("the phone number of Ann").
_IDENTIFIER_NUMBERS = {
    "phone", "telephone", "mobile", "contact", "fax", "account", "card", "flight", "order", "tracking", "serial",
    "model", "version", "room", "house", "seat", "gate", "platform", "bus", "train", "route", "policy", "ticket",
    "registration", "reference", "confirmation", "license", "licence", "member", "membership", "id", "pin",
    "zip", "postal", "street", "apartment", "unit", "invoice", "customer", "booking", "vehicle", "plate", "jersey",
}  # fmt: skip
# What makes "how many" / "the number of" a count of things on the screen rather than a figure read off it.
# ("How many likes are there?" is, in the real data, a figure printed on the screen: not a cue.)
_ON_SCREEN = {("are", "shown"), ("are", "listed"), ("are", "displayed"), ("are", "visible"), ("you", "see"),
              ("the", "screen"), ("this", "screen"), ("the", "page"), ("this", "page"), ("in", "all"),
              }  # fmt: skip
_SUPERLATIVES = {"most", "least", "highest", "lowest", "cheapest", "biggest", "smallest", "largest", "best", "worst"}
_COMPARATIVES = {"more", "less", "fewer", "higher", "lower", "cheaper", "bigger", "smaller", "larger", "older",
                 "newer", "longer", "shorter", "greater"}  # fmt: skip
_AUXILIARIES = {"is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should", "has",
                "have", "had", "am"}  # fmt: skip
# A yes/no question about a control's state is read off the screen ("Is Wi-Fi on?").
_STATES = {"on", "off", "enabled", "disabled", "checked", "unchecked", "selected", "unselected", "active",
           "inactive", "switched", "toggled", "turned", "open", "closed", "available", "visible"}  # fmt: skip
_ADS = {"ad", "ads", "advert", "adverts", "advertisement", "advertisements", "advertising", "sponsored", "sponsor",
        "sponsors", "banner"}  # fmt: skip


def _words(text: str) -> list[str]:
    return _TOKEN.findall(_QUOTED.sub(" ", text.lower().replace("’", "'")))


def _pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(pairwise(words))


def _counting(w: list[str], first: str) -> bool:
    pairs = _pairs(w)
    counted = False
    if ("how", "many") in pairs:
        counted = True
    for k in range(len(w) - 1):
        if (w[k], w[k + 1]) == ("number", "of") and (k == 0 or w[k - 1] not in _IDENTIFIER_NUMBERS):
            counted = True
    if w[:1] == ["count"]:
        return True
    return counted and bool(pairs & _ON_SCREEN or set(w) & {"altogether"})


def _arithmetic(w: list[str], first: str) -> bool:
    pairs = _pairs(w)
    words = set(w)
    operations = {("sum", "of"), ("total", "of"), ("add", "up"), ("added", "together"), ("difference", "between"),
                  ("divided", "by"), ("multiplied", "by")}  # fmt: skip
    return bool(
        pairs & operations
        or words & {"multiply", "subtract", "calculate", "combined"}
        or (("how", "much") in pairs and words & {"more", "less", "cheaper", "longer"})
    )


def _comparison(w: list[str], first: str) -> bool:
    for k, word in enumerate(w):
        prev = w[k - 1] if k else ""
        after = w[k + 1] if k + 1 < len(w) else ""
        if word in _SUPERLATIVES and prev != "at" and after not in {"recent", "recently", "popular", "viewed"}:
            return True
        if word in _COMPARATIVES and "than" in w[k + 1 :]:
            return True
    return False


def _yes_no(w: list[str], first: str) -> bool:
    """``first``: the question's first word, quotes included (``"Ciber1" is from ...`` is no yes/no)."""
    if first == "why":
        return True
    # "Is there any ...?" / "Are there any ...?" ask what the screen lists: read off it.
    # "Is the child male or female?" chooses between two values the screen shows.
    return first in _AUXILIARIES and w[1:2] != ["there"] and not set(w) & (_STATES | {"or"})


def _ad(w: list[str], first: str) -> bool:
    return bool(set(w) & _ADS)


_RULES: list[tuple[str, Callable[[list[str], str], bool], str]] = [
    ("counting", _counting, "Looks like counting: answers must be read off the screen, not counted."),
    ("arithmetic", _arithmetic, "Looks like arithmetic: no calculation, the answer must be printed on the screen."),
    ("comparison", _comparison, "Looks like a comparison: no comparing values across the screen."),
    ("yes-no", _yes_no, "Yes/no or why question: only when the screen states the answer itself."),
    ("ads", _ad, "About an ad? Questions about advertisements are not allowed."),
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
    words = _words(text)
    first = next(iter(_TOKEN.findall(text.lower()[:40])), "")
    for kind, rule, message in _RULES:
        if rule(words, first):
            hints.append(Hint(kind, message))
    return hints

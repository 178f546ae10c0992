"""Ranking a screen's VH candidates for a question, with text and layout features only.

A ScreenQA answer is usually the *value* next to a *label* the question names ("What is the price?"
-> the "$3.99" right of or below "Price"), sometimes the element the question names itself (a title,
a button). Each candidate scores:

* ``label``: how well the question's content words match a nearby candidate's text (to its left on
  the same row, or just above it), weighted by nearness: the value-of-a-label feature;
* ``kind``: whether the candidate's text has the shape the question asks for (a number for "how
  many", money for "price"/"cost", a date or time for "when", an e-mail, a phone number, a rating);
* ``own``: the question's words in the candidate's own text (small: answers rarely repeat them);
* priors: no text scores nothing; a very long text, a huge box, or a text that is only a question
  word scores less.

The weights are hand-set and measured by ``devtools/bench/bench_assist.py`` on the real questions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "at",
        "by",
        "with",
        "from",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "many",
        "much",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "i",
        "me",
        "my",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "there",
        "here",
        "as",
        "than",
        "then",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "have",
        "has",
        "had",
        "not",
        "no",
        "yes",
        "about",
        "into",
        "over",
        "under",
        "up",
        "down",
        "out",
        "any",
        "all",
        "some",
        "each",
        "per",
        "please",
        "tell",
        "show",
        "shown",
        "displayed",
        "screen",
        "page",
        "app",
        "application",
        "given",
        "mentioned",
        "listed",
        "name",
        "type",
        "kind",
        "value",
        "current",
        "option",
        "options",
        "selected",
    ]
)
WORD = re.compile(r"[a-z0-9]+")
NUMBER = re.compile(r"\d")
MONEY = re.compile(r"[$€£¥₹]|\b(usd|eur|gbp|inr|rs)\b|\d+[.,]\d{2}\b", re.IGNORECASE)
DATE = re.compile(
    r"\b(\d{1,2}[/.-]\d{1,2}([/.-]\d{2,4})?|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*\d{1,2}"
    r"|\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|today|yesterday|tomorrow|ago)\b",
    re.IGNORECASE,
)
TIME = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d+\s*(am|pm|min|mins|minutes|hours?|hrs?|sec|seconds?)\b", re.IGNORECASE)
EMAIL = re.compile(r"\S+@\S+\.\w+")
PHONE = re.compile(r"\+?\d[\d\s().-]{6,}\d")
RATING = re.compile(r"^\s*\d(\.\d)?\s*(/\s*5|stars?)?\s*$", re.IGNORECASE)

# question pattern -> the shape of the answer it asks for
KINDS: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (re.compile(r"\b(price|cost|fee|fare|pay|paid|amount|total|balance|salary)\b", re.I), MONEY),
    (re.compile(r"\b(when|date|day|year|month|birthday|born|expire|expiry|due)\b", re.I), DATE),
    (re.compile(r"\b(time|duration|long|hours?|minutes?)\b", re.I), TIME),
    (re.compile(r"\b(e-?mail)\b", re.I), EMAIL),
    (re.compile(r"\b(phone|telephone|mobile|contact number|call)\b", re.I), PHONE),
    (re.compile(r"\b(rating|rated|stars?|score)\b", re.I), RATING),
    (
        re.compile(
            r"\b(how many|how much|number of|count|percentage|percent|level|size|age|temperature|"
            r"distance|weight|height|version|capacity|storage|battery|speed|rate)\b",
            re.I,
        ),
        NUMBER,
    ),
]

WEIGHTS = {
    "label": 2.0,
    "kind": 1.2,
    "own": 0.6,
    "long": 0.5,
    "huge": 0.5,
    "empty": 3.0,
    "label_only": 0.8,
    "reverse": 1.5,
}


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def content(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOP and len(w) > 1}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _overlap(question: set[str], text: str) -> float:
    """Share of the question's content words found in ``text`` (stems compared)."""
    if not question:
        return 0.0
    have = {_stem(w) for w in content(text)}
    return sum(1 for w in question if _stem(w) in have) / len(question)


def _near(a: Sequence[int], b: Sequence[int], height: int) -> float:
    """How much ``b`` reads as the value of label ``a``: right of it on the same row, or just below
    it; 0 when neither. 1 for touching, falling with the gap."""
    al, at, ar, ab = a
    bl, bt, br, bb = b
    row_overlap = min(ab, bb) - max(at, bt)
    if row_overlap > 0.4 * min(ab - at, bb - bt) and bl >= ar - 5:
        return 1.0 / (1.0 + max(0, bl - ar) / (0.15 * height))
    col_overlap = min(ar, br) - max(al, bl)
    if col_overlap > 0 and bt >= ab - 5:
        return 0.9 / (1.0 + max(0, bt - ab) / (0.03 * height))
    return 0.0


def rank(*, question: str, candidates: Sequence[dict[str, Any]], width: int, height: int) -> list[tuple[int, float]]:
    """``[(vh_index, score)]``, best first, scores in (0, 1) (a logistic of the features' sum)."""
    asked = content(question)
    shapes = [shape for pattern, shape in KINDS if pattern.search(question)]
    texts = [(c, " ".join((c.get("text") or "").split())) for c in candidates]
    labels = [(c, _overlap(asked, text)) for c, text in texts if text]
    area = max(1, width * height)
    scored = []
    for candidate, text in texts:
        box = candidate["bounds"]
        own = _overlap(asked, text)
        label = max(
            (
                match * _near(other["bounds"], box, height)
                for other, match in labels
                if other is not candidate and match
            ),
            default=0.0,
        )
        kind = 1.0 if shapes and text and any(shape.search(text) for shape in shapes) else 0.0
        # the question names the value, and asks for its label ("Which country has 8 scanners?")
        named = (match * _near(box, other["bounds"], height) for other, match in labels if other is not candidate)
        reverse = max(named, default=0.0) if not shapes else 0.0
        x = WEIGHTS["label"] * label + WEIGHTS["kind"] * kind + WEIGHTS["own"] * own - 1.5
        x += WEIGHTS["reverse"] * reverse
        if not text:
            x -= WEIGHTS["empty"]
        elif len(text) > 120:
            x -= WEIGHTS["long"]
        if (box[2] - box[0]) * (box[3] - box[1]) > 0.4 * area:
            x -= WEIGHTS["huge"]
        if own >= 0.99 and label == 0 and not kind and len(content(text)) <= len(asked):
            x -= WEIGHTS["label_only"] * (1.0 if shapes else 0.3)  # the label itself, when a value is asked for
        scored.append((candidate["vh_index"], 1.0 / (1.0 + math.exp(-x))))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored


def judgments(*, candidates: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Pre-filtering guesses from the VH text alone: the share of non-ASCII letters (non-English app),
    and no score for out of sync (the VH cannot see the pixels: 0.5, undecided)."""
    text = "".join(c.get("text") or "" for c in candidates)
    letters = [ch for ch in text if ch.isalpha()]
    foreign = sum(1 for ch in letters if ord(ch) > 0x24F) / len(letters) if letters else 0.0
    return {"non_english_app": round(min(1.0, foreign * 2), 3), "vh_out_of_sync": 0.5}

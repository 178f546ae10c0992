"""Rule-based short answers (the offline default of stage 6).

Contract of ``short_answers_from_rules``: the first item is the *primary* short answer (every element
used, in order, with the words copied from the question trimmed off its ends); the plain joined
element text follows when it differs; then the variants (numbers as digits and as words, thousands
separators, currency and percent spellings, units dropped, date formats, on/off as enabled/disabled,
list conjunctions). No duplicates (exact string comparison), deterministic for the same input.
``["<no answer>"]`` for a not-answerable question or an empty element list.

The rules were written from the variants seen in the real release (short_answers/validation.json):
see docs/short_answers.md for each rule and the measured coverage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime

NO_ANSWER = "<no answer>"

_WORD = re.compile(r"[\w']+")
_SPACES = re.compile(r"\s+")
# Characters trimmed from the ends of an answer once question words are removed ("Price: $3" -> "$3").
_EDGE_PUNCT = " \t\n:;,-–—|/()[]"
_QUOTES = "\"'“”‘’«»"

_SMALL = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUES = {w: i for i, w in enumerate(_SMALL)} | {w: 10 * i for i, w in enumerate(_TENS) if w}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}

_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_MONTH_INDEX = {m.lower(): i + 1 for i, m in enumerate(_MONTHS)} | {m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)}
_MONTH_INDEX["sept"] = 9
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_WEEKDAY_RE = r"(?:(?P<weekday>mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|urday|sday)?\.?,?\s+)?"
_MONTH_RE = r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY_RE = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_RE = r"(?P<year>\d{4})"
_DATE_PATTERNS = [
    re.compile(rf"^{_WEEKDAY_RE}{_MONTH_RE}\s+{_DAY_RE},?(?:\s+{_YEAR_RE})?$", re.IGNORECASE),  # May 5, 2017
    re.compile(rf"^{_WEEKDAY_RE}{_DAY_RE}\s+{_MONTH_RE},?(?:\s+{_YEAR_RE})?$", re.IGNORECASE),  # 5 May 2017
    re.compile(r"^(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})$"),  # 2017-05-05
    re.compile(r"^(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})$"),  # 05/05/2017 (US order)
]
_NUMBER = re.compile(
    r"^(?P<currency>[$€£])?\s?(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<unit>%|°.*|[^\W\d_].*)?$"
)
_TIME = re.compile(r"^(?P<clock>\d{1,2}(?::\d{2}){1,2})\s*(?P<half>[ap])\.?\s*m\.?$", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow many (?P<rest>.+)", re.IGNORECASE)
# Words that end the noun of a "How many <noun> ..." question.
_STOP_WORDS = (
    "are is do does did have has had on in of for can will were was there the a an to at by from with "
    "i you we they he she it my your their his her its this that these those"
)
_STOP = frozenset(_STOP_WORDS.split())
_ARTICLE_PREFIX = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_CURRENCY_WORDS = {"$": "dollars", "€": "euros", "£": "pounds"}
_ON_OFF = {"on": "enabled", "off": "disabled"}


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        item = _SPACES.sub(" ", item).strip()
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def int_to_words(n: int) -> str:
    """English words for 0 <= n < 10**9 ("twenty-two", "one hundred and ten")."""
    if n < 20:
        return _SMALL[n]
    if n < 100:
        tens, rest = divmod(n, 10)
        return _TENS[tens] + (f"-{_SMALL[rest]}" if rest else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_SMALL[hundreds]} hundred" + (f" and {int_to_words(rest)}" if rest else "")
    for scale, name in ((1_000_000, "million"), (1_000, "thousand")):
        if n >= scale:
            high, rest = divmod(n, scale)
            tail = "" if not rest else (" and " if rest < 100 else " ") + int_to_words(rest)
            return f"{int_to_words(high)} {name}{tail}"
    raise ValueError(n)


def words_to_int(text: str) -> int | None:
    """The value of an English number phrase ("twenty-two", "one hundred and ten"), else None."""
    words = [w for w in re.split(r"[\s-]+", text.lower().strip()) if w and w != "and"]
    if not words:
        return None
    total = current = 0
    for word in words:
        if word in _WORD_VALUES:
            current += _WORD_VALUES[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
    return total + current


def _question_words(question: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(question)}


def strip_question_words(answer: str, question: str) -> str:
    """Trim words copied from the question off both ends of ``answer`` (never down to nothing).

    Only the ends: "Price: $3.00" for "What is the price?" becomes "$3.00", "3 reviews" for "How many
    reviews?" becomes "3", but a question word inside a name ("Bank of America") stays.
    """
    asked = _question_words(question)
    words = answer.split()

    def copied(word: str) -> bool:
        core = word.strip(_EDGE_PUNCT + _QUOTES).lower()
        return bool(core) and core in asked

    start, end = 0, len(words)
    while start < end and copied(words[start]):
        start += 1
    while end > start and copied(words[end - 1]):
        end -= 1
    if start == end:
        return answer
    trimmed = " ".join(words[start:end]).strip(_EDGE_PUNCT)
    return trimmed or answer


def join_elements(elements: Sequence[str], full_answer: str) -> list[str]:
    """The ways to join the element texts: the primary first.

    One element: itself. Several: joined by spaces when the full answer writes them as one phrase
    ("Jon" + "Brown" -> "Jon Brown", "Oct." + "15" + "2024"), else as a list "A, B" followed by
    "A, B and C" and "A, B or C" (the release's variants for enumerations).
    """
    texts = [_SPACES.sub(" ", e).strip() for e in elements]
    texts = [t for t in texts if t]
    if len(texts) <= 1:
        return texts
    spaced = " ".join(texts)
    if spaced.lower() in _SPACES.sub(" ", full_answer).lower():
        return [spaced]
    head = ", ".join(texts[:-1])
    return [", ".join(texts), f"{head} and {texts[-1]}", f"{head} or {texts[-1]}"]


def _number_variants(text: str) -> list[str]:
    match = _NUMBER.match(text)
    out: list[str] = []
    if match is None:
        value = words_to_int(text)
        if value is not None:
            out.append(str(value))
        return out
    currency, number, unit = match["currency"], match["number"], (match["unit"] or "").strip()
    plain = number.replace(",", "")
    numbers = [number, plain] if plain != number else [number]
    if "." not in plain and len(plain) <= 9:
        words = int_to_words(int(plain))
    elif plain.endswith(".00") or plain.endswith(".0"):
        words = int_to_words(int(float(plain))) if float(plain) < 1e9 else ""
        numbers.append(plain.split(".")[0])
    else:
        words = ""
    if currency:
        name = _CURRENCY_WORDS[currency]
        out += [f"{n} {name}" for n in numbers] + numbers
        if words:
            out.append(f"{words} {name}")
    elif unit == "%":
        out += [f"{n} percent" for n in numbers] + numbers + [f"{n} %" for n in numbers]
        if words:
            out.append(f"{words} percent")
    elif unit:
        sep = "" if unit.startswith("°") else " "
        out += [f"{n}{sep}{unit}" for n in numbers] + numbers
        if words:
            out += [f"{words} {unit}", words] if sep else [words]
    else:
        out += numbers
        if words:
            out.append(words)
    return out


def _parse_date(text: str) -> tuple[date, bool, bool] | None:
    """(date, has_year, has_weekday) for a recognised date text, else None."""
    cleaned = text.strip().rstrip(".")
    for pattern in _DATE_PATTERNS:
        match = pattern.match(cleaned)
        if match is None:
            continue
        month_text = match["month"]
        month = int(month_text) if month_text.isdigit() else _MONTH_INDEX[month_text.lower()[:3]]
        has_year = match["year"] is not None
        try:
            value = date(int(match["year"]) if has_year else 2000, month, int(match["day"]))
        except ValueError:
            return None
        has_weekday = match.groupdict().get("weekday") is not None
        return value, has_year, has_weekday
    return None


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _date_variants(text: str) -> list[str]:
    parsed = _parse_date(text)
    if parsed is None:
        return []
    value, has_year, has_weekday = parsed
    month = _MONTHS[value.month - 1]
    d = value.day
    if not has_year:
        return [f"{month} {d}", f"{d} {month}", f"{month} {_ordinal(d)}", f"{month[:3]} {d}"]
    y = value.year
    out = [
        f"{month} {d}, {y}",
        f"{d} {month} {y}",
        value.isoformat(),
        f"{month} {_ordinal(d)}, {y}",
        f"{month[:3]} {d}, {y}",
        f"{value.month:02d}/{d:02d}/{y}",
    ]
    out.append(f"{d} {month[:3]} {y}")
    if has_weekday:
        weekday = _WEEKDAYS[datetime(y, value.month, d).weekday()]
        out[1:1] = [
            f"{weekday}, {month} {d}, {y}",
            f"{weekday}, {d} {month} {y}",
            f"{weekday[:3]}, {month[:3]} {d}, {y}",
        ]
    return out


def _time_variants(text: str) -> list[str]:
    """ "2:24 a.m." <-> "2:24 AM" <-> "2:24 am"."""
    match = _TIME.match(text.strip())
    if match is None:
        return []
    clock, half = match["clock"], match["half"].lower()
    return [f"{clock} {half.upper()}M", f"{clock} {half}.m.", f"{clock} {half}m", f"{clock}{half}m"]


def _word_number_prefix_variants(text: str) -> list[str]:
    """ "zero minutes" -> "0 minutes", "one hundred fifty dollars" -> "150 dollars"."""
    words = text.split()
    for cut in range(len(words) - 1, 0, -1):
        value = words_to_int(" ".join(words[:cut]))
        if value is not None:
            return [f"{value} {' '.join(words[cut:])}"]
    return []


def _counted_noun(question: str) -> str | None:
    """The noun of a "How many <noun> ..." question ("followers", "total rounds"), else None."""
    match = _HOW_MANY.search(question)
    if match is None:
        return None
    nouns: list[str] = []
    for word in match["rest"].split()[:2]:
        word = word.strip(_EDGE_PUNCT + _QUOTES + "?.!").lower()
        if not word or word in _STOP or word.endswith(("ed", "ing")):
            break
        nouns.append(word)
    return " ".join(nouns) or None


def value_variants(text: str) -> list[str]:
    """Variants of one answer text: numbers, units, currency, percent, dates, on/off."""
    out: list[str] = []
    lowered = text.strip().lower()
    if lowered in _ON_OFF:
        out += [lowered, _ON_OFF[lowered]]
    out += _date_variants(text)
    out += _time_variants(text)
    out += _number_variants(text)
    out += _word_number_prefix_variants(text)
    stripped = text.strip()
    if stripped.endswith(".") and len(stripped) > 4 and not _parse_date(stripped):
        out.append(stripped.rstrip("."))
    without_article = _ARTICLE_PREFIX.sub("", stripped)
    if without_article and without_article != stripped:
        out.append(without_article)
    unquoted = text.strip().strip(_QUOTES).strip()
    if unquoted and unquoted != text.strip():
        out.append(unquoted)
    return out


def short_answers_from_rules(
    *, question: str, elements: Sequence[str], full_answer: str, not_answerable: bool = False
) -> list[str]:
    """The rule-based short answers (see the module docstring for the contract)."""
    joined = join_elements(elements, full_answer)
    if not_answerable or not joined:
        return [NO_ANSWER]
    raw = joined[0]
    primary = strip_question_words(raw, question)
    candidates = [primary, raw]
    candidates += value_variants(primary)
    if primary != raw:
        candidates += value_variants(raw)
    noun = _counted_noun(question)
    number_match = _NUMBER.match(primary)
    if noun and number_match is not None and not (number_match["unit"] or "").strip():
        # "How many followers?" + "88,210" -> also "88,210 followers" (the unit is optional).
        candidates += [f"{number} {noun}" for number in _number_variants(primary)]
    for other in joined[1:]:
        candidates.append(other)
    return _dedupe(candidates)

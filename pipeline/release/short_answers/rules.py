"""Rule-based short answers (the offline default of stage 6).

Contract of ``short_answers_from_rules``: the first item is the *primary* short answer (every element
used, in order; a label or unit copied from the question dropped only around a bare value, see
``primary_answer``); the plain joined element text follows when it differs; then the variants (numbers,
currency, percent, units, ordinals, counts of nothing, dates, clock times, durations, ranges, phone
numbers, enumerations, the question's noun, on/off, optional decorations). No duplicates (exact string
comparison), at most ``MAX_ANSWERS`` items, deterministic for the same input. ``["<no answer>"]`` for a
not-answerable question or an empty element list.

The rules were written from the variants seen in the real release (short_answers/validation.json; the
test split is held out): see docs/short_answers.md for each rule and the measured coverage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from pipeline.release.short_answers.dates import (
    DURATION_CUES,
    date_variants,
    duration_variants,
    parse_date,
    time_variants,
    weekday_variants,
)
from pipeline.release.short_answers.lists import list_variants, phone_variants, split_list
from pipeline.release.short_answers.numbers import (
    DIGITS,
    free_variants,
    int_to_words,
    nothing_variants,
    number_words,
    ordinal_forms,
    parse_number,
    parse_ordinal,
    plural,
    quantity_variants,
    singular,
    unit_name_variants,
    words_to_number,
)

__all__ = [
    "MAX_ANSWERS",
    "NO_ANSWER",
    "int_to_words",
    "primary_answer",
    "short_answers_from_rules",
    "strip_question_words",
    "words_to_int",
]

NO_ANSWER = "<no answer>"
# Most real questions have 1 to 4 short answers and none more than 17; a date or an amount has about
# 20 spellings, so 30 keeps every family's first forms without lists of junk.
MAX_ANSWERS = 30

_WORD = re.compile(r"[\w']+")
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n:;,-–—|/()[]"
_QUOTES = "\"'“”‘’«»"
_ARTICLES = frozenset({"the", "a", "an"})
_ARTICLE_PREFIX = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_MARKS = re.compile(r"[®™©℠]")
_WRAPPERS = {"(": ")", "[": "]", "|": "|", "{": "}"}
_QUOTED = re.compile(r'^"[^"]+"$')
_VALUE = re.compile(rf"^[$€£₹¥]?\s?(?:{DIGITS}|\d+(?:\.\d+){{2,}})%?$")  # a version number "3.7.0.1" too
# A checkbox or switch: the release writes its state with any of these (first ones most often).
_STATES = (
    ("on", "enabled", "checked", "selected", "active", "ON", "turned on", "activated", "chosen"),
    (
        *("off", "disabled", "unchecked", "not selected", "not checked", "unselected", "inactive", "not enabled"),
        *("OFF", "turned off", "deselected", "not on", "not chosen", "deactivated"),
    ),
)
_AGE_QUESTION = re.compile(r"\b(?:age|how old)\b", re.IGNORECASE)
_STOP_WORDS = (
    "are is do does did have has had on in of for can will were was there the a an to at by from with "
    "i you we they he she it my your their his her its this that these those ago"
)
_STOP = frozenset(_STOP_WORDS.split())
# Words that follow a count rather than name what is counted ("How many feet away ...").
_AFTER_WORDS = frozenset(["away", "left", "ago", "remaining", "long", "old", "more", "total"])
_COUNTED = re.compile(
    r"\b(?:how many|(?:total )?number of|count of|total count of|amount of|(?:is|are) there any)\s+(?P<rest>.+)",
    re.IGNORECASE,
)
# "Which tab is selected?", "10 minutes is for which option?", "What version of X is used?" -> tab,
# option, version.
_WHICH_NOUN = re.compile(r"\bwhich\s+(?P<noun>[a-z]+)\b", re.IGNORECASE)
_WHAT_NOUN = re.compile(
    r"^(?:\w+\s+)?what\s+(?P<noun>[a-z]+)\s+(?:of|is|are|was|were|has|have|had|does|do|did|can|will|should|am)\b",
    re.IGNORECASE,
)
# "What is the selected tab?", "What is the option selected?", "What is the version of the app?" -> the
# noun phrase after "the", up to a preposition or the end (see ``head_noun``).
_THE_PHRASE = re.compile(
    r"^(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the|this|that)\s+(?P<phrase>[a-z -]+?)"
    r"(?:\s+(?P<prep>of|in|for|on|under|from|at|to)\s+(?:the\s+|this\s+|that\s+)?(?P<owner>[a-z]+\b)?.*)?\s*\??$",
    re.IGNORECASE,
)
_PARTICIPLES = frozenset(["shown", "chosen", "given", "seen", "written", "set", "turned", "on", "off"])
# The release says "app" and "application" for one another.
_SYNONYMS = {"app": "application", "application": "app", "apps": "applications", "applications": "apps"}
# Nouns that name an attribute, not a kind of thing: "17 dollars" is an answer, "17 price" is not.
_ATTRIBUTE_NOUNS = frozenset(
    [
        "name",
        "title",
        "status",
        "state",
        "setting",
        "settings",
        "value",
        "number",
        "count",
        "total",
        "amount",
        "price",
        "cost",
        "date",
        "time",
        "day",
        "year",
        "text",
        "type",
        "label",
        "rating",
        "score",
        "percentage",
        "temperature",
        "address",
        "location",
        "email",
        "username",
        "id",
        "code",
        "size",
        "duration",
        "length",
        "distance",
        "weight",
        "height",
        "speed",
        "answer",
        "message",
        "description",
        "reason",
        "purpose",
        "way",
        "kind",
        "sort",
        "unit",
        "currency",
        "limit",
        "range",
        "period",
        "timing",
        "word",
        "phrase",
        "term",
        "one",
    ]
)
# Of those, the ones the release still writes before a number: "the year 2017", "version 3.2".
_NUMBERING_NOUNS = frozenset(["year", "version", "number", "code", "id"])
_MONEY_QUESTION = re.compile(
    r"\b(?:price|prices|cost|costs|fee|fees|pay|paid|balance|dollars?|usd|spent|spend|bid|budget|earn|earned|fare)\b",
    re.IGNORECASE,
)
_UNIT_QUESTION = re.compile(r"\b(?:units?|format|measured?|scale)\b", re.IGNORECASE)
_IN_UNIT = re.compile(r"\bin\s+(?P<unit>[A-Za-z°/]+(?:\s+per\s+[a-z]+)?)\s*\??$")
_LEADS = re.compile(
    r"(?P<for>\bhow long\b|^for\b|\bfor how many\b)|(?P<in>\bin how many\b|\buntil\b|\bwhen will\b|\bexpires? in\b)",
    re.IGNORECASE,
)
_PHONE_QUESTION = re.compile(r"\b(?:phone|call|contact|mobile|tel|telephone|fax|dial|number)", re.IGNORECASE)
_RATING_QUESTION = re.compile(r"\brat(?:ing|ed)\b|\bstars?\b", re.IGNORECASE)
# Words the release repeats after a value when the question says them ("13 days left", "5 years old"),
# or after a length of time or distance when the question asks for one ("29 seconds long", "4 miles away").
_SUFFIXES = (
    ("ago", re.compile(r"\bago\b", re.IGNORECASE)),
    ("left", re.compile(r"\bleft\b", re.IGNORECASE)),
    ("remaining", re.compile(r"\bremaining\b", re.IGNORECASE)),
    ("old", re.compile(r"\bold\b", re.IGNORECASE)),
    ("off", re.compile(r"\b(?:off|discount)\b", re.IGNORECASE)),
    ("away", re.compile(r"\b(?:away|how far|distance)\b", re.IGNORECASE)),
    ("long", re.compile(r"\b(?:long|duration|length)\b", re.IGNORECASE)),
)
_PERCENT_QUESTION = re.compile(r"\b(?:percent|percentage)\b|%", re.IGNORECASE)
# A preposition leading the answer that the release also leaves out ("by Todd Richards", "via Facebook").
_LEADING_PREPOSITION = re.compile(
    r"^(?:by|via|through|from|for|in|to|with|at(?!\s+(?:least|most)\b)|a total of|total of)\s+(?=\S)", re.I
)
_DATETIME_SPLIT = re.compile(r"\s*,?\s+at\s+|\s*,?\s+on\s+|\s*,\s*|\s+")


def words_to_int(text: str) -> int | None:
    """The whole value of an English number phrase ("twenty-two", "one hundred and ten"), else None."""
    value = words_to_number(text)
    return int(value) if value is not None and value == value.to_integral_value() else None


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        item = _SPACES.sub(" ", item).strip()
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _question_words(question: str) -> set[str]:
    words = {w.lower() for w in _WORD.findall(question)}
    return words | {_SYNONYMS[w] for w in words if w in _SYNONYMS}


def _copied(word: str, asked: set[str]) -> bool:
    core = word.strip(_EDGE_PUNCT + _QUOTES).lower()
    return bool(core) and (core in asked or core in _ARTICLES)


def strip_question_words(answer: str, question: str) -> str:
    """Trim words copied from the question (and articles) off both ends of ``answer``, never down to
    nothing, never from the middle ("Royal Bank of Canada" stays). A *variant*, not the primary: see
    ``primary_answer`` for when the trimmed text may lead.
    """
    asked = _question_words(question)
    words = answer.split()
    start, end = 0, len(words)
    while start < end and _copied(words[start], asked):
        start += 1
    while end > start and _copied(words[end - 1], asked):
        end -= 1
    if start == end or (start, end) == (0, len(words)):
        return answer
    trimmed = " ".join(words[start:end]).strip(_EDGE_PUNCT)
    if trimmed.count('"') % 2:
        return answer
    return trimmed or answer


def _unwrap(text: str) -> str:
    """ "(17)" -> "17", "|drama|" -> "drama": brackets or bars around the whole text."""
    if len(text) > 2 and text[0] in _WRAPPERS and text[-1] == _WRAPPERS[text[0]]:
        inner = text[1:-1].strip()
        if inner and not any(c in inner for c in "()[]|{}"):
            return inner
    return text


def _is_value(text: str) -> bool:
    """A bare value: a number (with a currency sign or percent), or one quoted string."""
    return bool(_VALUE.match(text) or _QUOTED.match(text))


def primary_answer(raw: str, question: str) -> str:
    """The primary short answer of the joined element text.

    Words copied from the question are dropped only where they cannot be part of the answer:
    a label before a colon ("Price: $3.00" -> "$3.00"), or a label or unit around a bare value
    ("ID 416" -> "416", "3 reviews" for "How many reviews?" -> "3", '"All" tab' for "Which tab?" ->
    '"All"'). Anything else stays whole: "no points", "the sacral chakra", "Rapid City", a question
    quoted as a title. Brackets or bars around the whole text go ("(17)" -> "17").
    """
    text = _unwrap(_SPACES.sub(" ", raw).strip())
    asked = _question_words(question)
    label, colon, rest = text.partition(": ")
    if colon and rest.strip() and '"' not in label and label.split() and all(_copied(w, asked) for w in label.split()):
        return _unwrap(rest.strip())
    words = text.split()
    start, end = 0, len(words)
    while start < end - 1 and _copied(words[start], asked):
        start += 1
    while end > start + 1 and _copied(words[end - 1], asked):
        end -= 1
    if (start, end) != (0, len(words)):
        core = " ".join(words[start:end])
        if _is_value(core):
            return core
    return text


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
    return list_variants(texts)


def counted_noun(question: str) -> str | None:
    """The noun a question counts ("How many followers ...", "the number of comments") , else None."""
    match = _COUNTED.search(question)
    if match is None:
        return None
    nouns: list[str] = []
    rest = match["rest"].split()
    if rest and rest[0].lower() == "total":
        rest = rest[1:]
    for word in rest[:3]:
        word = word.strip(_EDGE_PUNCT + _QUOTES + "?.!").lower()
        if not word or word in _STOP or word.endswith(("ed", "ing")) or not word.isalpha() or word in _AFTER_WORDS:
            break
        nouns.append(word)
        if len(nouns) == 2:
            break
    return " ".join(nouns) or None


def head_noun(question: str) -> str | None:
    """The kind of thing a "Which tab is selected?" / "What is the version?" question asks for
    (attribute nouns such as "name" or "price" included: the callers choose)."""
    text = question.strip()
    nouns: list[str] = []
    for pattern in (_WHICH_NOUN, _WHAT_NOUN):
        match = pattern.search(text) if pattern is _WHICH_NOUN else pattern.match(text)
        if match is not None:
            nouns.append(match["noun"].lower())
    match = _THE_PHRASE.match(text)
    if match is not None:
        words = match["phrase"].lower().split()
        while len(words) > 1 and (words[-1].endswith("ed") or words[-1] in _PARTICIPLES):
            words.pop()  # "the option selected" -> option
        if words:
            noun = words[-1]
            if noun in ("name", "title") and match["owner"]:
                noun = match["owner"].lower()  # "the name of the application" -> application
            nouns.append(noun)
    for noun in nouns:
        if noun not in _STOP and noun not in ("one", "of") and len(noun) > 1 and noun.isalpha():
            return singular(noun)
    return None


@dataclass(frozen=True)
class _Context:
    question: str
    counted: str | None
    noun: str | None  # the question's head noun, when it names a kind of thing (not "name", "price")
    numbering: str | None  # the head noun when the release writes it before a number ("page 3")
    duration: bool
    money: bool
    percent: bool
    suffix: str | None  # a word of the question the release repeats after the value ("left", "ago")


def _range_variants(text: str, ctx: _Context) -> list[str]:
    """ "9:30 AM - 5:00 PM" <-> "9:30 AM to 5:00 PM" <-> "between 9:30 AM and 5:00 PM" <-> "from ... to ..."."""
    match = re.match(
        r"^(?:(?P<lead>from|between)\s+)?(?P<a>.+?)\s*(?:\s(?:to|and|through|until|till)\s|\s?[-–—]\s?)\s*(?P<b>.+)$",
        text.strip(),
        re.IGNORECASE,
    )
    if match is None:
        return []
    a, b = match["a"].strip(), match["b"].strip()
    forms_a = _value_family(a, ctx)
    forms_b = _value_family(b, ctx)
    if not forms_a or not forms_b:
        return []
    pairs = [(a, b), *zip(forms_a[:4], forms_b[:4], strict=False)]
    out: list[str] = []
    for x, y in pairs:
        out += [f"{x} to {y}", f"{x} - {y}", f"between {x} and {y}", f"from {x} to {y}", f"{x}-{y}"]
    return out


def _value_family(text: str, ctx: _Context) -> list[str]:
    """Variants from the value rules only (no lists, no ranges): [] when the text is no value."""
    if parse_date(text):
        return date_variants(text)
    return (
        time_variants(text, duration_context=ctx.duration)
        or duration_variants(text, duration_context=ctx.duration)
        or quantity_variants(text)
    )


def _ordinal_variants(text: str, ctx: _Context) -> list[str]:
    """ "the first page" <-> "page 1" <-> "1st" <-> "first"; "3" for "Which level?" -> "level 3"."""
    words = text.strip().split()
    if words and words[0].lower() in _ARTICLES:
        words = words[1:]
    if not words or len(words) > 2:
        return []
    n = parse_ordinal(words[0])
    noun = " ".join(words[1:]) or ctx.numbering or ""
    if n is None and len(words) == 2 and words[0].isalpha() and words[1].isdigit() and 0 < int(words[1]) <= 100:
        # "page 1" -> "first page", "the first page", "1st page", "page one"
        noun, n = words[0], int(words[1])
        first, spelled = ordinal_forms(n)
        return [f"{spelled} {noun}", f"the {spelled} {noun}", f"{first} {noun}", f"{noun} {int_to_words(n)}"]
    if n is None:
        if len(words) != 1 or not ctx.numbering:
            return []
        value = words[0]
        number = words_to_int(value)
        if re.fullmatch(r"\d+(?:\.\d+)*", value):
            forms = [f"{ctx.numbering} {value}", f"{ctx.numbering.capitalize()} {value}", f"{value} {ctx.numbering}"]
            owner = _numbered_thing(ctx.question, ctx.numbering)
            if owner:  # "What is the gate number?" -> "gate 9", "9 gate number"; "the zip code" -> "94101 zip code"
                forms += [f"{owner} {value}", f"{value} {owner} {ctx.numbering}", f"{owner} {ctx.numbering} {value}"]
            if ctx.numbering == "year":
                forms.append(f"the year {value}")
            if value.isdigit() and int(value) <= 100 and ctx.numbering not in _NUMBERING_NOUNS:
                first, spelled = ordinal_forms(int(value))
                forms += [first, spelled, f"the {first} {ctx.numbering}", f"{ctx.numbering} {int_to_words(int(value))}"]
            return forms
        if number is not None:
            return [f"{ctx.numbering} {number}", f"{ctx.numbering} {value}"]
        return []
    first, spelled = ordinal_forms(n)
    out = [str(n), first, spelled]
    if noun:
        out += [
            f"{noun} {n}",
            f"the {spelled} {noun}",
            f"{spelled} {noun}",
            f"{first} {noun}",
            f"{noun} {int_to_words(n)}",
        ]
    return out


def _numbered_thing(question: str, noun: str) -> str | None:
    """The word before a numbering noun in the question: "gate" of "the gate number", "zip" of "zip code"."""
    match = re.search(rf"\b(?:the|a|this|given)\s+(?P<owner>[A-Za-z]+)\s+{noun}s?\b", question, re.IGNORECASE)
    if match is None or match["owner"].lower() in _STOP or match["owner"].endswith("ed"):
        return None
    return match["owner"]


def _noun_variants(text: str, ctx: _Context) -> list[str]:
    """ "History" for "Which option is selected?" -> '"History" option', "History option"."""
    if ctx.noun is None or len(text.split()) > 8:
        return []
    kinds = {ctx.noun, plural(ctx.noun), *(_SYNONYMS.get(w, w) for w in (ctx.noun, plural(ctx.noun)))}
    if any(singular(w.strip(_EDGE_PUNCT + _QUOTES).lower()) in kinds for w in text.split()):
        return []  # "the sacral chakra" for "Which chakra healing ...?" already says what it is
    bare = text.strip(_QUOTES)
    if not bare or parse_number(bare) is not None:
        return []
    out = [f'"{bare}" {ctx.noun}', f"{bare} {ctx.noun}", f'the {ctx.noun} "{bare}"']
    other = _SYNONYMS.get(ctx.noun)
    if other is not None:
        out += [f'"{bare}" {other}', f"{bare} {other}"]
    return out


def _datetime_variants(text: str, ctx: _Context) -> list[str]:
    """ "April 6, 2017, at 8:19 PM" <-> "April 6, 2017 8:19 PM" <-> "8:19 PM, April 6, 2017"."""
    for match in sorted(_DATETIME_SPLIT.finditer(text), key=lambda m: -m.start()):
        first, second = text[: match.start()].strip(" ,"), text[match.end() :].strip(" ,")
        if not first or not second:
            continue
        for date_text, time_text in ((first, second), (second, first)):
            dates = date_variants(date_text)
            times = time_variants(time_text) or ([time_text] if re.fullmatch(r"\d{1,2}:\d{2}", time_text) else [])
            if dates and times:
                date_forms = [date_text, *dates[:3]]
                time_forms = [time_text, *times[:2]]
                out: list[str] = []
                for d in date_forms:
                    for t in time_forms:
                        out += [f"{d}, {t}", f"{d} at {t}", f"{t}, {d}", f"{t} on {d}"]
                return out
    return []


def _decorations(text: str) -> list[str]:
    out: list[str] = []
    stripped = text.strip()
    if stripped.endswith(".") and len(stripped) > 4 and not parse_date(stripped):
        out.append(stripped.rstrip("."))
    without_article = _ARTICLE_PREFIX.sub("", stripped)
    if without_article and without_article != stripped:
        out.append(without_article)
    unquoted = stripped.strip(_QUOTES).strip()
    if unquoted and unquoted != stripped and stripped[0] in _QUOTES and stripped[-1] in _QUOTES:
        out.append(unquoted)  # quotes around the whole text only, never half a pair
    unmarked = _MARKS.sub("", stripped).strip()
    if unmarked and unmarked != stripped:
        out.append(unmarked)  # "ServiceMaster®" -> "ServiceMaster"
    labelled = re.fullmatch(r'(?:[a-z]+\s+){1,3}(?P<quoted>"[^"]+")|(?P<first>"[^"]+")(?:\s+[a-z]+){1,2}', stripped)
    if labelled is not None:  # 'the category "Asphalt Oval"', '"Side Dishes" category' -> the quoted name
        quoted = labelled["quoted"] or labelled["first"]
        out += [quoted, quoted.strip('"')]
    kind_after = re.fullmatch(
        r"(?P<name>(?:[A-Z0-9][^\s\"]*|[\w-]+\.[a-z]{2,})(?:\s+[A-Z0-9][^\s\"]*){0,3})\s+(?P<kind>[a-z]+)", stripped
    )
    if kind_after is not None and kind_after["kind"] not in _STOP:
        out.append(kind_after["name"])  # "GPS feature" -> "GPS", "StyleShare app" -> "StyleShare"
    bracket = re.fullmatch(r"(?P<head>[^()]+?)\s*\((?P<inner>[^()]+)\)", stripped)
    if bracket is not None:
        out += [bracket["head"], bracket["inner"]]  # "Bari (BRI)" -> "Bari", "BRI"
    bare_url = re.sub(r"^(?:https?://)?(?:www\.)?", "", stripped, flags=re.IGNORECASE)
    if bare_url != stripped and "." in bare_url:
        out.append(bare_url)  # "www.runtastic.com" -> "runtastic.com"
    if re.fullmatch(r"[vV]\d+(?:\.\d+)+", stripped):
        out.append(stripped[1:])  # "v2.1.7" -> "2.1.7"
    return out


def value_variants(text: str, ctx: _Context) -> list[str]:
    """Every variant family for one answer text, most plausible first."""
    lowered = text.strip().lower()
    out: list[str] = []
    for state in _STATES:
        if lowered in (w.lower() for w in state):
            out += list(state)
    version = re.fullmatch(r"v?\d+(?:\.\d+)+", text.strip()) and re.search(r"\bversion", ctx.question, re.I)
    if not version:  # "4.2.12" for a version question is no date
        out += date_variants(text) or weekday_variants(text)
    out += time_variants(text, duration_context=ctx.duration)
    out += duration_variants(text, duration_context=ctx.duration)
    if not text.strip().isdigit() or _PHONE_QUESTION.search(ctx.question):
        out += phone_variants(text)  # a bare "1932307" is an ID unless the question asks for a phone
    quantities = quantity_variants(text, counted=ctx.counted)
    bare = _VALUE.match(text.strip()) and text.strip()[:1].isdigit() and not text.strip().endswith("%")
    if bare and ctx.counted in ("seconds", "minutes", "hours", "days", "weeks", "months", "years"):
        # "18" for "How many hours ago ...?" -> "18 hours", "18h", "18 hrs"
        out += duration_variants(f"{text.strip()} {ctx.counted}", duration_context=True)
    if bare and _AGE_QUESTION.search(ctx.question) and text.strip().isdigit():
        quantities += [f"{w} years old" for w in number_words(Decimal(text.strip()))[::2]]
    if _RATING_QUESTION.search(ctx.question):
        quantities += _rating_variants(text)
    quantities += _fraction_variants(text) + _mixed_number_variants(text) + _dimension_variants(text)
    asked_unit = _IN_UNIT.search(ctx.question)
    if bare and asked_unit is not None:  # "What is the weight in lbs?" -> "141 lbs", "141 pounds"
        quantities += quantity_variants(f"{text.strip()} {asked_unit['unit']}")[:6]
    if bare and re.search(r"\btotal\b", ctx.question, re.IGNORECASE):
        quantities += [f"{text.strip()} total", f"a total of {text.strip()}"]  # "How many total branches?"
    if _AGE_QUESTION.search(ctx.question):
        quantities += _age_variants(text)
    cents = bool(re.fullmatch(rf"(?:{DIGITS})", text.strip()) and re.search(r"\.\d\d$", text.strip()))
    if bare and ctx.percent:
        quantities += quantity_variants(f"{text.strip()}%")
    elif bare and (ctx.money or (cents and not _RATING_QUESTION.search(ctx.question))):
        # a price question, or an amount with cents ("6,634.00" for "What is the total amount?")
        quantities += quantity_variants(f"${text.strip()}")
    out += quantities
    out += nothing_variants(text, ctx.counted) + free_variants(text)
    if _UNIT_QUESTION.search(ctx.question) or re.match(r"degrees?\s", lowered):
        out += unit_name_variants(text)
    out += _ordinal_variants(text, ctx)
    if not out:
        out += _datetime_variants(text, ctx) or _range_variants(text, ctx)
    if not out:
        listed = split_list(text)
        if listed is not None and (
            listed[1] or '"' in text or len(listed[0]) > 2 or _plural_question(ctx.question) or _two_names(listed[0])
        ):
            out += list_variants(*listed)
            if not _plural_question(ctx.question) and listed[1] == "and" and len(listed[0]) == 2:
                out += _noun_variants(text, ctx)  # "Eggs and dairy" for "Which option is selected?": one option
        else:
            out += _noun_variants(text, ctx)
    if len(text.split()) <= 4:
        out += country_variants(text)
    word = text.strip()
    if not out and word.isalpha() and word.islower() and len(word) > 3:
        # one common noun: the release writes it in either number ("dollar" <-> "dollars", "flood" <-> "floods")
        other = singular(word) if singular(word) != word else plural(word)
        if other != word:
            out.append(other)
    out += _decorations(text)
    return out


def _rating_variants(text: str) -> list[str]:
    """A rating: "4.1" <-> "4.1 stars" <-> "4.1 out of 5" <-> "4.1 out of 5 stars" <-> "4.1-star" <-> "4.1 star"."""
    match = re.fullmatch(r"(?P<n>\d(?:\.\d+)?)(?:\s*(?:stars?|out of 5(?: stars)?|/5))?", text.strip(), re.IGNORECASE)
    if match is None:
        return []
    n = match["n"]
    stars = "star" if n == "1" else "stars"
    out = [f"{n} {stars}", f"{n} out of 5", f"{n} out of 5 {stars}", f"{n}-star", f"{n} star", n]
    if "." not in n:
        out.append(f"{n}.0 {stars}")
    return out


def _age_variants(text: str) -> list[str]:
    """An age: "48 years" <-> "48 years old" <-> "48" ("thirty years old" -> "30 years"), and an age limit:
    "17+" <-> "17 and older" <-> "17 years and above" <-> "over 17"."""
    stripped = text.strip()
    limit = re.fullmatch(
        r"(?:(?:at least|over|minimum)\s+)?(?P<n>[\w-]+?)\+?(?:[ -]years?)?(?:[ -]old)?"
        r"(?:\s+(?:and|or)\s+(?:above|older|over|up|more))?",
        stripped,
        re.IGNORECASE,
    )
    if limit is None:
        return []
    n = limit["n"] if limit["n"].isdigit() else words_to_int(limit["n"])
    if n is None:
        return []
    if stripped == str(n) or re.fullmatch(r"[\w-]+(?:[ -]years?)?(?:[ -]old)?", stripped, re.IGNORECASE):
        words = int_to_words(int(n))
        return [f"{n} years old", f"{n} years", str(n), f"{n}-year-old", f"{words} years old", f"{words} years"]
    return [
        *(f"{n} and older", f"{n} or older", f"{n} and above", f"{n}+", f"over {n}"),
        *(f"{n} years and older", f"{n} years and above", f"{n} years old and above", f"{n} years or older"),
    ]


# The fractions a screen writes after a whole number, and how the release says them.
_HALVES = {"1/2": ("5", "a half"), "1/4": ("25", "a quarter"), "3/4": ("75", "three quarters")}


def _mixed_number_variants(text: str) -> list[str]:
    """ "4 1/2 stars" <-> "4.5 stars" <-> "4.5" <-> "four and a half stars"."""
    match = re.fullmatch(r"(?P<n>\d+)\s+(?P<f>[13]/[24])(?P<unit>\s+[a-z]+)?", text.strip(), re.IGNORECASE)
    if match is None or match["f"] not in _HALVES:
        return []
    decimal, said = _HALVES[match["f"]]
    unit = match["unit"] or ""
    n = match["n"]
    value = f"{n}.{decimal}"
    return [f"{value}{unit}", value, f"{int_to_words(int(n))} and {said}{unit}", f"{n} and {said}{unit}"]


def _dimension_variants(text: str) -> list[str]:
    """ "1440 by 2392 pixels" <-> "1440 x 2392" <-> "1440x2392"."""
    match = re.fullmatch(r"(?P<a>\d+)\s*(?:by|x|×|\*)\s*(?P<b>\d+)(?P<unit>\s+[a-z]+)?", text.strip(), re.IGNORECASE)
    if match is None:
        return []
    a, b, unit = match["a"], match["b"], match["unit"] or ""
    out = [f"{a} x {b}{unit}", f"{a}x{b}{unit}", f"{a} by {b}{unit}", f"{a} × {b}{unit}"]
    return out + ([f"{a} x {b}", f"{a} by {b}"] if unit else [])


def _fraction_variants(text: str) -> list[str]:
    """A score or a progress: "5/10" <-> "5 out of 10" <-> "5 of 10"."""
    match = re.fullmatch(
        r"(?P<a>\d+(?:\.\d+)?)\s*(?:/|\s(?:out\s+)?of\s)\s*(?P<b>\d+(?:\.\d+)?)", text.strip(), re.IGNORECASE
    )
    if match is None:
        return []
    a, b = match["a"], match["b"]
    return [f"{a} out of {b}", f"{a}/{b}", f"{a} of {b}"]


def _two_names(items: list[str]) -> bool:
    """ "Play Store, Browser", "Napoli, Barcelona": two items that are not a place and its region
    ("San Francisco, CA", "Paris, France") nor a value with its detail."""
    if len(items) != 2 or any(re.search(r"\d", i) for i in items):
        return False
    second = items[1]
    return not (re.fullmatch(r"[A-Z]{2,3}", second) or _place(second))


def _place(text: str) -> bool:
    """A country or territory name from babel's CLDR list ("France"), so "Paris, France" stays a place."""
    return text.strip().lower() in _place_names()


@cache
def _place_names() -> frozenset[str]:
    from babel import Locale

    names = {n.lower() for n in Locale("en").territories.values()}
    return frozenset(names)


@cache
def _territory_names() -> dict[str, str]:
    from babel import Locale

    return {c: n for c, n in Locale("en").territories.items() if c.isalpha()}


@cache
def _countries() -> tuple[dict[str, str], dict[str, list[str]]]:
    """(lower-cased English name or code -> ISO alpha-2, alpha-2 -> its letter aliases) from babel's CLDR."""
    from babel import Locale
    from babel.core import get_global

    names = {name.lower(): code for code, name in Locale("en").territories.items() if code.isalpha()}
    aliases: dict[str, list[str]] = {}
    for alias, codes in get_global("territory_aliases").items():
        if alias.isalpha() and len(codes) == 1:
            aliases.setdefault(codes[0], []).append(alias)
    return names, aliases


def country_variants(text: str) -> list[str]:
    """ "United States" <-> "US" <-> "USA" <-> "U.S." <-> "U.S.A."; "United Kingdom" <-> "UK" (CLDR names and
    ISO codes; only for a text that is a country and nothing else)."""
    stripped = _ARTICLE_PREFIX.sub("", text.strip()).strip(".")
    names, aliases = _countries()
    code = names.get(stripped.lower())
    letters_said = stripped.replace(".", "")
    if code is None and letters_said.isupper() and len(letters_said) in (2, 3):
        # a code only in capitals ("UK", "USA", "U.S."): "and", "Ben" or "can" are no countries
        code = next((c for c, extra in aliases.items() if letters_said in extra), None)
        if code is None and letters_said in _territory_names():
            # a bare two-letter code only when it is the name's initials ("US"), never "IN" or "CA" (a state)
            initials = "".join(w[0] for w in _territory_names()[letters_said].split() if w[0].isupper())
            code = letters_said if initials == letters_said else None
    if code is None or len(stripped) < 2:
        return []
    from babel import Locale

    name = Locale("en").territories.get(code)
    if name is None:
        return []  # an alias of a code with no English name ("AA")
    initials = "".join(w[0] for w in name.split() if w[0].isupper())
    # the ISO codes, and a two-letter alias only when it is the name's initials ("UK"; not France's old "FX")
    letters = [code, *(a for a in aliases.get(code, []) if len(a) == 3 or a == initials)]
    # CLDR's aliases also hold retired codes ("DDR" for Germany, "FXX" for France): an alpha-3 code is kept
    # only when it holds both letters of the alpha-2 one, in order
    letters = [a for a in letters if len(a) != 3 or re.fullmatch(f"{code[0]}.?{code[1]}.?", a)]
    dotted = [".".join(a) + "." for a in letters if len(initials) > 1 and a.startswith(initials)]
    out = [name, *letters, *dotted]
    if code == "US":
        out.append("United States of America")  # CLDR's long form is not in babel's name table
    return [o for o in dict.fromkeys(out) if o.lower() != stripped.lower()]


def _plural_question(question: str) -> bool:
    return bool(re.search(r"\b(?:are|were)\b|\b(?:which|what)\s+(?:\w+\s+)?\w{3,}s\b", question, re.IGNORECASE))


def _names_something(raw: str, trimmed: str) -> bool:
    """Whether trimming left a name and cut only lower-case words ("English language" -> "English",
    '"WEEKLY ADS" tab' -> '"WEEKLY ADS"'), not part of a name ("Rapid City") or of a phrase ("the sacral chakra")."""
    if trimmed == raw or not trimmed:
        return False
    cut = raw.replace(trimmed, " ", 1).split()
    if not all(w.islower() for w in cut):
        return False
    first = trimmed.lstrip(_QUOTES)[:1]
    return first.isupper() or first.isdigit()


def short_answers_from_rules(
    *, question: str, elements: Sequence[str], full_answer: str, not_answerable: bool = False
) -> list[str]:
    """The rule-based short answers (see the module docstring for the contract)."""
    joined = join_elements(elements, full_answer)
    if not_answerable or not joined:
        return [NO_ANSWER]
    raw = joined[0]
    primary = primary_answer(raw, question)
    trimmed = strip_question_words(raw, question)
    noun = head_noun(question)
    ctx = _Context(
        question=question,
        counted=counted_noun(question),
        noun=noun if noun not in _ATTRIBUTE_NOUNS else None,
        numbering=noun if noun is not None and (noun not in _ATTRIBUTE_NOUNS or noun in _NUMBERING_NOUNS) else None,
        duration=bool(DURATION_CUES.search(question)),
        money=bool(_MONEY_QUESTION.search(question)),
        percent=bool(_PERCENT_QUESTION.search(question)),
        suffix=next((word for word, cue in _SUFFIXES if cue.search(question)), None),
    )
    candidates = [primary, raw]
    texts = [primary, raw]
    unled = _LEADING_PREPOSITION.sub("", primary)
    if unled != primary and unled.strip():
        texts.append(unled)  # "via Facebook" -> "Facebook", "for 30 days" -> "30 days" (and its variants)
    if _is_value(trimmed) or _value_family(trimmed, ctx) or _names_something(raw, trimmed):
        texts.append(trimmed)  # "English language" -> "English"; never a cut phrase ("the sacral")
    for text in dict.fromkeys(texts):
        variants = [text, *value_variants(text, ctx)]
        lead = _LEADS.search(question)
        if lead is not None and re.match(r"^\S+\s+[a-z]", text) and re.search(r"\d", text):
            # "24 hours" for "How long ...?" -> "for 24 hours"; "6 days" for "In how many days ...?" -> "in 6 days"
            variants.append(f"{'for' if lead['for'] else 'in'} {text}")
        if ctx.suffix and not text.lower().endswith(ctx.suffix) and re.search(r"\d|%", text):
            suffixed = [v for v in [text, *variants][:6] if re.search(r"[a-z%]$", v, re.IGNORECASE)]
            variants += [f"{v} {ctx.suffix}" for v in suffixed]
        candidates += variants
    candidates += joined[1:]
    return _dedupe(candidates)[:MAX_ANSWERS]

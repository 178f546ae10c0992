"""Numbers in short answers: reading them (digits, words, "45 thousand", "13K") and writing their
variants (digits with and without separators, words with and without "and", ordinals), and the
quantities built on them: currency, percent, units, comparators ("over 200"), counts of nothing.

Number words come from ``inflect`` (digits -> words, ordinals, plurals) and ``text2num`` (words ->
digits); currency names and symbols from ``babel`` (CLDR); unit names and symbols from ``pint``.
The only tables here are the English glue the libraries do not hold (comparator synonyms, the
words for "nothing").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from typing import Any

import inflect
from text_to_num import text2num

_INFLECT = inflect.engine()

# A number written with digits: thousands separators, decimals, a K/M/B suffix ("13K", "9.7M").
DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_DIGITS_RE = re.compile(rf"^(?P<n>{DIGITS})(?P<suffix>[kmb])?$", re.IGNORECASE)
_SUFFIX = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_SCALE_WORDS = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_VOCAB = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
    ]
)
_MAX_WORDS = 10**12
# Comparators the release rewrites into one another ("over 200" / "more than 200").
_COMPARATORS: tuple[tuple[str, ...], ...] = (
    ("over", "more than", "greater than", "above"),
    ("at least", "minimum", "a minimum of"),
    ("under", "less than", "below"),
    ("up to", "at most", "maximum", "a maximum of"),
    ("about", "around", "approximately"),
)
_COMPARATOR_RE = re.compile(
    r"^(?P<cmp>"
    + "|".join(sorted((re.escape(c) for group in _COMPARATORS for c in group), key=len, reverse=True))
    + r")\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_NOTHING = ("no", "none", "zero", "0")


def _clean_number(text: str) -> str:
    return text.replace(",", "")


def words_to_number(text: str) -> Decimal | None:
    """The value of an English number phrase ("twenty-two", "a hundred", "four point three",
    "one hundred and ten"), else None. Digits mixed with scale words ("445 thousand and 733") too."""
    words = text.lower().replace("-", " ").split()
    if not words:
        return None
    if words[0] == "a" and len(words) > 1 and words[1] in ("hundred", "thousand", "million"):
        words[0] = "one"
    if "point" in words:
        cut = words.index("point")
        whole = words_to_number(" ".join(words[:cut])) if cut else Decimal(0)
        decimals = []
        for word in words[cut + 1 :]:
            value = words_to_number(word)
            if value is None or not 0 <= value <= 9:
                return None
            decimals.append(str(int(value)))
        if whole is None or not decimals:
            return None
        return Decimal(f"{int(whole)}.{''.join(decimals)}")
    if any(re.fullmatch(DIGITS, w) for w in words):
        return _mixed_to_number(words)
    if not all(w in _NUMBER_VOCAB or w == "and" for w in words) or words[0] == "and" or words[-1] == "and":
        return None
    try:
        return Decimal(text2num(" ".join(words), "en"))
    except ValueError:
        return None


def _mixed_to_number(words: list[str]) -> Decimal | None:
    """ "445 thousand and 733", "4.284835 million", "1 million"."""
    total = Decimal(0)
    current: Decimal | None = None
    for word in words:
        if re.fullmatch(DIGITS, word):
            if current is not None:
                return None
            current = Decimal(_clean_number(word))
        elif word in _SCALE_WORDS and current is not None:
            total += current * _SCALE_WORDS[word]
            current = None
        elif word == "and" and current is None and total:
            continue
        else:
            return None
    if current is None and not total:
        return None
    return total + (current or 0)


def parse_number(text: str) -> Decimal | None:
    """The value of a number written with digits ("1,234.50", "13K") or words, else None."""
    text = text.strip()
    match = _DIGITS_RE.match(text)
    if match is not None:
        try:
            value = Decimal(_clean_number(match["n"]))
        except InvalidOperation:
            return None
        if match["suffix"]:
            value *= _SUFFIX[match["suffix"].lower()]
        return value
    return words_to_number(text)


@lru_cache(maxsize=4096)  # inflect checks its arguments' types at run time: the same few numbers recur
def int_to_words(n: int, *, andword: str = "and") -> str:
    """English words for a whole number ("twenty-two", "one hundred and ten"), no commas."""
    return str(_INFLECT.number_to_words(str(n), andword=andword, comma=""))


def _plain(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def number_words(value: Decimal) -> list[str]:
    """The word forms of a value: with and without "and" for whole numbers, "point" for decimals."""
    if value < 0 or value >= _MAX_WORDS:
        return []
    if value == value.to_integral_value():
        n = int(value)
        forms = [int_to_words(n), int_to_words(n, andword="")]
        # SQuAD's normalisation deletes the hyphen: "thirty-nine" reads "thirtynine", not "thirty nine".
        forms += [f.replace("-", " ") for f in forms]
        if n in (100, 1000):
            forms.append(forms[0].replace("one ", "a "))  # "a hundred", "a thousand"
        return list(dict.fromkeys(forms))
    plain = _plain(value)
    return [str(_INFLECT.number_to_words(plain, comma=""))]


def number_digits(value: Decimal, source: str | None = None) -> list[str]:
    """Digit forms: as written, without and with thousands separators, without ".00" decimals, and
    with a scale word or K/M suffix for round thousands and millions ("17,000" -> "17k", "17 thousand")."""
    out: list[str] = []
    if source:
        out.append(source)
        if "," in source:
            out.append(_clean_number(source))
    whole = value == value.to_integral_value()
    if whole:
        n = int(value)
        out += [str(n), f"{n:,}"]
    else:
        plain = _plain(value)
        out.append(plain)
        integer, _, decimals = plain.partition(".")
        out.append(f"{int(integer):,}.{decimals}")
        if len(decimals) == 1:
            out.append(f"{plain}0")
    if whole and value >= 1000:
        n = int(value)
        for scale, word, letter in (
            (1_000_000_000, "billion", "B"),
            (1_000_000, "million", "M"),
            (1_000, "thousand", "K"),
        ):
            if n >= scale and n % (scale // 10) == 0:
                short = _plain(Decimal(n) / scale)
                out += [f"{short} {word}", f"{short}{letter}"]
                break
    return list(dict.fromkeys(out))


def number_forms(value: Decimal, source: str | None = None) -> list[str]:
    """Every way to write a value: digits first, then words."""
    return list(dict.fromkeys(number_digits(value, source) + number_words(value)))


# --- ordinals ---------------------------------------------------------------------------------

_ORDINAL_DIGITS = re.compile(r"^(?P<n>\d+)(?:st|nd|rd|th)$", re.IGNORECASE)


@cache
def _ordinal_words() -> dict[str, int]:
    return {str(_INFLECT.ordinal(int_to_words(i))): i for i in range(1, 101)}


def parse_ordinal(text: str) -> int | None:
    """ "3rd" -> 3, "third" -> 3, "twenty-first" -> 21, else None."""
    text = text.strip().lower()
    match = _ORDINAL_DIGITS.match(text)
    if match is not None:
        return int(match["n"])
    return _ordinal_words().get(text)


def ordinal_forms(n: int) -> list[str]:
    return [str(_INFLECT.ordinal(str(n))), str(_INFLECT.ordinal(int_to_words(n)))]


# --- plurals ----------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def singular(word: str) -> str:
    """ "reviews" -> "review"; the word itself when it is not a plural noun."""
    if not word.strip():
        return word
    result = _INFLECT.singular_noun(word)
    return word if result is False or not result else str(result)


@lru_cache(maxsize=4096)
def plural(word: str) -> str:
    return str(_INFLECT.plural(word)) if word.strip() else word


def with_count(value: Decimal, noun: str) -> str:
    """The noun agreeing with the value ("1 review", "3 reviews"); the noun as given otherwise."""
    if not noun or not noun[-1].isalpha():
        return noun
    words = noun.split()
    head = words[0] if len(words) > 1 and words[1] in ("per", "of") else words[-1]
    if not head.isalpha() or head.isupper():
        return noun
    new = singular(head) if value == 1 else plural(singular(head))
    index = words.index(head)
    return " ".join([*words[:index], new, *words[index + 1 :]])


# --- currency (babel) -------------------------------------------------------------------------


@cache
def _currencies() -> tuple[dict[str, str], dict[str, str]]:
    """(symbol -> ISO code for the one-character symbols, ISO code -> code) from CLDR's en_US."""
    from babel.numbers import get_currency_symbol, list_currencies

    symbols: dict[str, str] = {}
    for code in sorted(list_currencies()):
        symbol = get_currency_symbol(code, locale="en_US")
        if len(symbol) == 1 and not symbol.isalnum() and symbol not in symbols:
            symbols[symbol] = code
    symbols["$"] = "USD"
    return symbols, {code: code for code in list_currencies()}


@cache
def currency_names(code: str) -> tuple[str, str]:
    """(singular, plural) of a currency's short English name ("dollar", "dollars")."""
    from babel.numbers import get_currency_name

    one = get_currency_name(code, count=1, locale="en").split()[-1].lower()
    many = get_currency_name(code, count=2, locale="en").split()[-1].lower()
    return one, many


def currency_code(token: str) -> str | None:
    """The ISO code for a currency symbol ("$", "€") or code ("USD", "aed"), else None."""
    symbols, codes = _currencies()
    if token in symbols:
        return symbols[token]
    upper = token.upper()
    return codes.get(upper) if len(token) == 3 and token.isalpha() else None


def currency_symbol(code: str) -> str | None:
    symbols, _ = _currencies()
    return next((s for s, c in symbols.items() if c == code), None)


def currency_from_word(word: str) -> str | None:
    """ "dollars" -> "USD", "euro" -> "EUR" (the common ones only: the names are ambiguous)."""
    for code in ("USD", "EUR", "GBP", "INR", "JPY"):
        if word.lower() in currency_names(code):
            return code
    return None


# --- units (pint) -----------------------------------------------------------------------------


@cache
def _units() -> Any:
    import pint

    return pint.UnitRegistry()


# Time units are handled as durations (dates.py); single letters are too ambiguous in free text.
_UNIT_SKIP = frozenset(
    [
        *("s", "m", "h", "d", "in", "g", "t", "am", "pm", "min", "sec", "hr", "day", "days", "week", "year"),
        # pint's typographic point is never a screen's "points" (of a game, a loyalty card)
        *("point", "points"),
    ]
)


def unit_forms(unit: str, value: Decimal) -> list[str]:
    """Other spellings of a unit: its pint symbol or name, agreeing with the value ("mi" <->
    "miles", "GB" <-> "gigabytes", "°F" <-> "degrees Fahrenheit"); [] when pint does not know it."""
    stripped = unit.strip()
    if not stripped or stripped.lower() in _UNIT_SKIP or len(stripped) > 30:
        return []
    registry = _units()
    try:
        parsed = registry.parse_units(stripped)
    except Exception:
        return []
    if len(parsed._units) != 1 and "per" not in str(parsed):
        return []
    if parsed.dimensionality == registry.second.dimensionality:
        return []  # time units are durations (dates.py)
    name = str(parsed).replace("_", " ")
    symbol = f"{parsed:~}".replace(" ", "")
    known = {name.lower(), symbol.lower()}
    if len(stripped) > 3 and stripped.isalpha() and not {stripped.lower(), singular(stripped.lower())} & known:
        return []  # a word pint read as a prefixed unit ("units" -> micro-"nits"), not the unit's name
    if "/" in symbol and "per" not in stripped:
        return []
    named = with_count(value, name.replace(" ", "_")).replace("_", " ") if " per " not in name else name
    if value != 1 and " per " in name:
        first, _, rest = name.partition(" per ")
        named = f"{plural(first)} per {rest}"
    out = [named, symbol]
    if name.startswith("degree "):
        out += [f"degrees {name.split(' ', 1)[1]}", "degrees"]
    return [u for u in dict.fromkeys(out) if u and u != stripped]


def unit_name_variants(text: str) -> list[str]:
    """A unit said alone ("What is the unit of weight?"): "kilograms" <-> "kg", "mph" <-> "miles per hour",
    "degrees Fahrenheit" <-> "°F" <-> "Fahrenheit"."""
    stripped = text.strip()
    degree = _DEGREES.match(stripped)
    if degree is not None and degree["scale"]:
        full = {"f": "Fahrenheit", "c": "Celsius"}.get(degree["scale"].lower(), degree["scale"].capitalize())
        return [f"°{full[0]}", full, f"degrees {full}", f"{full[0]}°"]
    if len(stripped.split()) > 3:
        return []
    forms = [*unit_forms(stripped, Decimal(2)), *unit_forms(stripped.lower(), Decimal(2))]
    # "lbs", "kgs": the symbols written in the plural, as screens do
    return forms + [f"{f}s" for f in forms if f.isalpha() and f.islower() and len(f) == 2]


# --- quantities -------------------------------------------------------------------------------

_QUANTITY = re.compile(
    rf"^(?P<cur>US\$|[^\w\s\d.,°+-]|[A-Za-z]{{3}}(?=\s?\d))?\s?(?P<n>{DIGITS})(?P<suffix>[kKmMbB](?![a-zA-Z]))?"
    rf"\s?(?P<after>[^\w\s\d°+]|[A-Z]{{3}}\b)?\s*(?P<unit>.*?)$"
)
_DEGREES = re.compile(r"^(?:°\s*|degrees?\s*)(?P<scale>fahrenheit|celsius|[fc])?$", re.IGNORECASE)
_MONEY_WORDS = re.compile(
    r"^(?P<whole>.+?)\s+(?P<name>dollars?|euros?)\s+(?:and\s+)?(?P<cents>.+?)(?:\s+cents?)?$", re.IGNORECASE
)
# A price said aloud: "thirty-nine ninety-five dollars", "seven twenty-five dollars" (dollars, then cents).
_SPOKEN_PRICE = re.compile(
    r"^(?P<whole>[a-z]+(?:[\s-][a-z]+)*?)\s+(?P<cents>[a-z]+(?:-[a-z]+)?)\s+(?P<name>dollars|euros)$", re.I
)
# "Free" is how the release says a price of nothing.
_FREE = ("free", "no charge", "free of charge", "no cost")


def comparator_variants(text: str) -> tuple[list[str], str]:
    """(the same comparator written the other ways, the rest) for "over 200" style texts."""
    match = _COMPARATOR_RE.match(text.strip())
    if match is None:
        return [], text
    said = match["cmp"].lower()
    group = next(g for g in _COMPARATORS if said in g)
    return [c for c in group if c != said], match["rest"]


# The comparators written after the value, most used first ("7 or more", "18 and above").
_POSTFIX_MORE = ("or more", "and above", "or higher", "and up", "and over", "or above", "and older", "or older")
_POSTFIX_LESS = ("or less", "or fewer", "and below", "or lower", "and under")
_POSTFIX_RE = re.compile(
    r"^(?P<rest>.*\d.*?)\s+(?P<post>" + "|".join(_POSTFIX_MORE + _POSTFIX_LESS) + r")$", re.IGNORECASE
)


def _or_more(said: str) -> str | None:
    """The postfix form of a comparator ("at least 5" -> "5 or more"), if it has one."""
    if said in _COMPARATORS[0] or said in _COMPARATORS[1]:
        return "or more"
    if said in _COMPARATORS[2] or said in _COMPARATORS[3]:
        return "or less"
    return None


def _postfix_forms(core: list[str], more: bool) -> list[str]:
    words = _POSTFIX_MORE[:5] if more else _POSTFIX_LESS[:3]
    return [f"{c} {w}" for c in core[:1] for w in words] + [f"{c} {words[0]}" for c in core[1:2]]


def _leading_words_number(text: str) -> tuple[Decimal, str, str] | None:
    """A number in words at the start of ``text``: (value, its words, the rest)."""
    words = text.split()
    for cut in range(min(len(words), 12), 0, -1):
        head = " ".join(words[:cut])
        value = words_to_number(head)
        if value is not None:
            return value, head, " ".join(words[cut:])
    return None


def _money_words(value: Decimal, code: str) -> list[str]:
    """ "7 dollars and 60 cents", "seven dollars and sixty cents" for USD and EUR amounts."""
    one, many = currency_names(code)
    whole = int(value)
    cents = int((value - whole) * 100)
    unit = one if whole == 1 else many
    out = []
    if cents and code in ("USD", "EUR"):
        cent = "cent" if cents == 1 else "cents"
        out.append(f"{whole} {unit} and {cents} {cent}")
        out.append(f"{int_to_words(whole)} {unit} and {int_to_words(cents)} {cent}")
        out.append(f"{int_to_words(whole, andword='')} {unit} and {int_to_words(cents)} {cent}".replace("-", " "))
        if not whole:
            out += [f"{cents} {cent}", f"{int_to_words(cents)} {cent}"]
    return out


def quantity_variants(text: str, *, counted: str | None = None) -> list[str]:
    """Variants of a number with its currency, percent sign or unit, optionally behind a
    comparator: "$7.60", "95%", "3 reviews", "over 200", "seven dollars", "4.3 stars".

    ``counted`` is the noun a "How many <noun>" question counts: it is offered as a unit when the
    text has none, and a count of nothing gets its "no <noun>" / "none" / "zero" forms.
    """
    stripped = text.strip()
    if stripped.endswith("+") and stripped[:-1].strip()[-1:].isdigit():
        core = _quantity_core(stripped[:-1].strip(), counted=counted)
        return (
            [f"{c}+" for c in core[:2] if re.search(r"\d", c)]
            + [f"{w} {c}" for w in ("over", "more than", "at least") for c in core[:2]]
            + _postfix_forms(core, more=True)
        )
    postfix = _POSTFIX_RE.match(stripped)
    if postfix is not None:  # "200 and over", "8 characters and above", "5 or less"
        core = _quantity_core(postfix["rest"].strip(), counted=counted)
        if not core:
            return []
        more = postfix["post"].lower() in _POSTFIX_MORE
        prefixes = ("at least", "over", "more than") if more else ("up to", "at most", "less than")
        bare = [c for c in core if re.fullmatch(DIGITS, c)][:1]
        written = postfix["rest"].strip()
        return (
            _postfix_forms(core, more=more)
            + [f"{w} {c}" for w in prefixes for c in dict.fromkeys([written, core[0]])]
            + [f"{b}+" for b in bare if more]
            + [f"{b} {w}" for b in bare if b != core[0] for w in (_POSTFIX_MORE if more else _POSTFIX_LESS)[:2]]
            + core[:2]
            + bare
        )
    signed = re.fullmatch(r"[+-]\s?(?P<rest>\d[\d.,]*\s?%)", stripped)
    if signed is not None:  # "+5%", "-50%": the release also writes the change without its sign
        return [stripped, *quantity_variants(signed["rest"], counted=counted)]
    sign = re.match(r"^(?P<sign>[<>≤≥])\s*(?=\S)", stripped)
    if sign is not None:  # "<$25,000" -> "less than $25,000", ">999mi" -> "more than 999mi"
        said = {"<": "less than", ">": "more than", "≤": "up to", "≥": "at least"}[sign["sign"]]
        return quantity_variants(f"{said} {stripped[sign.end() :]}", counted=counted)
    others, rest = comparator_variants(stripped)
    core = _quantity_core(rest, counted=counted)
    if not core:
        return []
    if not others:
        return core
    said = stripped[: len(stripped) - len(rest)].strip()
    out = [f"{said} {c}" for c in core]
    for comparator in others:
        out += [f"{comparator} {c}" for c in core[:3]]
    group = next(g for g in _COMPARATORS if said.lower() in g)
    # the release mixes the inclusive and strict comparators: "at least 100,000" <-> "more than 100,000"
    related = {_COMPARATORS[1]: _COMPARATORS[0], _COMPARATORS[0]: _COMPARATORS[1], _COMPARATORS[3]: _COMPARATORS[2]}
    for comparator in related.get(group, ())[:2]:
        out += [f"{comparator} {c}" for c in [rest, *core][:1]]
    postfix_word = _or_more(said.lower())
    if postfix_word:
        out += _postfix_forms(core, more=postfix_word == "or more")
    # the release also leaves the comparator out ("at least 7 points" -> "7 points", "7")
    bare = [c for c in core if re.fullmatch(DIGITS, c)][:1]
    return out + core[:2] + bare


def free_variants(text: str) -> list[str]:
    """ "no charge" <-> "free" <-> "free of charge" <-> "no cost"."""
    lowered = text.strip().rstrip(".").lower()
    return [f for f in _FREE if f != lowered] if lowered in _FREE else []


def _quantity_core(text: str, *, counted: str | None) -> list[str]:
    spoken_price = _SPOKEN_PRICE.match(text)
    if spoken_price is not None:
        whole, cents = words_to_number(spoken_price["whole"]), words_to_number(spoken_price["cents"])
        if whole is not None and cents is not None and 10 <= cents < 100 and whole < 1000:
            amount = whole + cents / 100
            said = currency_from_word(spoken_price["name"]) or "USD"
            return _money_variants(amount, said, number_digits(amount), number_words(amount), "", text)
    money = _MONEY_WORDS.match(text)
    if money is not None:
        whole, cents = words_to_number(money["whole"]), words_to_number(money["cents"])
        whole = whole if whole is not None else parse_number(money["whole"])
        cents = cents if cents is not None else parse_number(money["cents"])
        if whole is None or cents is None or not 0 <= cents < 100:
            return []
        amount = whole + cents / 100
        spoken = currency_from_word(money["name"]) or "USD"
        return _money_variants(amount, spoken, number_digits(amount), number_words(amount), "", text)
    if re.search(r"\d", text) and re.search(r"[a-z]", text):
        mixed = words_to_number(text)  # "445 thousand and 733", "4.284835 million"
        if mixed is not None:
            return _unit_variants(mixed, number_digits(mixed), number_words(mixed), "", counted)
    match = _QUANTITY.match(text)
    value: Decimal
    if match is not None:
        number = match["n"]
        read = parse_number(number + (match["suffix"] or ""))
        if read is None:
            return []
        value = read
        written = number + (match["suffix"] or "")
        before, after, unit = match["cur"] or "", match["after"] or "", match["unit"].strip()
        if match["suffix"] and unit.lower().startswith(("illion", "ile")):  # "1m" of "1 mile" is not a suffix
            return []
        if re.search(r"\d", unit):
            return []  # "11 am to 4 pm", "4 - 1": more than one value, left to the range and list rules
        digits = number_digits(value, written)
    else:
        parsed = _leading_words_number(text)
        if parsed is None:
            return []
        value, words, unit = parsed
        before = after = ""
        if unit.lower().startswith(("point", "and")) or (unit and words_to_number(unit.split()[0]) is not None):
            return []  # "one fifty" is a price said aloud, not one "fifty"
        digits = number_digits(value)
        written = words
    words_forms = number_words(value)
    code = currency_code(before) if before else (currency_code(after) if after and after != "%" else None)
    unit_words = unit.split()
    if code is None and len(unit_words) > 1 and unit_words[0].replace(".", "").upper() == "US":
        unit_words = unit_words[1:]  # "50 US dollars"
    named = currency_from_word(unit_words[0]) if code is None and unit_words else None
    if named is not None:
        code = named
        unit = " ".join(unit_words[1:])
    if code is not None:
        return _money_variants(value, code, digits, words_forms, unit, written)
    if after == "%" or unit.lower() in ("percent", "per cent", "%"):
        numbers = digits + words_forms
        out = [f"{n}%" for n in digits] + [f"{n} percent" for n in numbers] + digits + [f"{n} %" for n in digits[:1]]
        out += [f"{n} per cent" for n in digits[:1]]
        return out
    if before or after:
        return []
    return _unit_variants(value, digits, words_forms, unit, counted)


def _money_variants(
    value: Decimal, code: str, digits: list[str], words_forms: list[str], unit: str, written: str
) -> list[str]:
    one, many = currency_names(code)
    name = one if value == 1 else many
    symbol = currency_symbol(code)
    tail = f" {unit}" if unit else ""
    amounts = list(digits)
    if value == value.to_integral_value():
        amounts.append(f"{int(value)}.00")
    elif len(_plain(value).partition(".")[2]) == 1:
        amounts.append(f"{_plain(value)}0")
    amounts = list(dict.fromkeys(amounts))
    out: list[str] = []
    if symbol:
        out += [f"{symbol}{a}{tail}" for a in amounts]
        if symbol != "$":
            out += [f"{a}{symbol}{tail}" for a in amounts[:2]]
    out += [f"{a} {name}{tail}" for a in amounts]
    out += [f"{w} {name}{tail}" for w in words_forms]
    out += [f"{m}{tail}" for m in _money_words(value, code)]
    out += [f"{a}{tail}" for a in amounts]
    if code != "USD" or symbol is None:
        out += [f"{a} {code}{tail}" for a in amounts[:1]]
    else:
        out += [f"{a} USD{tail}" for a in amounts[:1]] + [f"US ${a}{tail}" for a in amounts[:1]]
    return out


def _unit_variants(
    value: Decimal, digits: list[str], words_forms: list[str], unit: str, counted: str | None
) -> list[str]:
    numbers = digits + words_forms
    out: list[str] = []
    if unit:
        first, _, tail = unit.partition(" ")
        degree = _DEGREES.match(unit)
        units = [unit]
        if degree is not None:
            scale = (degree["scale"] or "").strip()
            full = {"f": "Fahrenheit", "c": "Celsius"}.get(scale.lower(), scale.capitalize())
            letter = full[:1]
            units += [f"°{letter}", f"° {letter}", f"degrees {full}", "°", "degrees"] if scale else ["°", "degrees"]
            if scale:
                units.append(full)  # "43 Fahrenheit"
        else:
            symbols = unit_forms(first, value) or (unit_forms(unit, value) if tail else [])
            if len(first) > 3 or singular(first) != first:  # a word, not a symbol such as "mi" or "GB"
                agreeing = with_count(value, first)
                if agreeing != first:
                    units.append(f"{agreeing} {tail}".strip())
            units += [f"{u} {tail}".strip() if u in unit_forms(first, value) else u for u in symbols]
            if value != value.to_integral_value() and not tail and singular(first) != first:
                units.append(singular(first))  # "4.5 stars" -> "4.5 star" (as in "4.5 star rating")
        units = list(dict.fromkeys(u for u in units if u))
        for u in units:
            sep = "" if u.startswith("°") and not u.startswith("° ") else " "
            out += [f"{n}{sep}{u}".replace("  ", " ") for n in (numbers[:1] if u.startswith("°") else numbers[:2])]
            if u.startswith("°") and len(u) == 2:
                out.append(f"{digits[0]} {u}")  # "10 °C"
            if len(u) <= 3 and u.isalpha():
                out.append(f"{digits[0]}{u}")  # "102 kilograms" -> "102kg", "0.00 km" -> "0.00km": symbols stick
        out += [f"{w} {u}" for w in words_forms[:1] for u in units[:2] if not u.startswith("°")]
        out += numbers
        own = counted is not None and singular(first.lower()) == singular(counted.split()[-1])
        if not tail and first.isalpha() and value == value.to_integral_value() and not own and singular(first) != first:
            # "5 stars" -> "5-star" (the adjective the release writes for ratings, trials, codes).
            out.append(f"{digits[0]}-{singular(first)}")
    else:
        out += numbers
        if counted:
            noun = with_count(value, counted)
            out += [f"{n} {noun}" for n in numbers[:2]] + [f"{w} {noun}" for w in words_forms[:1]]
            if " " in counted:  # "How many nearby schools" -> "22 schools" too
                out.append(f"{digits[0]} {with_count(value, counted.split()[-1])}")
    if value == 0:
        said = unit if unit and unit.replace(" ", "").isalpha() else ""
        out += list(nothing_forms(counted or said))
        if said and said != counted:
            out += [f"no {said}"]  # "0 bids left" -> "no bids left"
    return out


def nothing_forms(noun: str) -> Iterator[str]:
    """A count of nothing: "0", "zero", "none", "no", "no <noun>" (plural and singular), "zero <noun>",
    "0 <noun>". The bare "no" is how the release answers "Are there any ...?" with nothing."""
    yield from ("0", "zero", "none", "no")
    if noun:
        many = with_count(Decimal(2), noun) if noun.replace(" ", "").isalpha() else noun
        one = with_count(Decimal(1), noun) if noun.replace(" ", "").isalpha() else noun
        yield from (f"no {many}", f"no {one}", f"zero {many}", f"0 {many}")


# "no tracks playing", "empty list": the longest text still read as "there are none".
_NOTHING_MAX_WORDS = 5


def nothing_variants(text: str, counted: str | None) -> list[str]:
    """ "no points", "none", "zero likes", "empty", "no records found" -> the other ways to say there
    are none ("no", "none", "0", "no record", "no <counted noun>")."""
    words = text.strip().rstrip(".").split()
    if not words or len(words) > _NOTHING_MAX_WORDS:
        return []
    first = words[0].lower()
    if first not in ("no", "none", "zero", "nothing", "empty") or (
        first == "no" and len(words) > 1 and words[1] == "one"
    ):
        return []
    if first in ("none", "nothing", "empty") and len(words) > 1 and not (first == "empty" and len(words) == 2):
        return []
    out: list[str] = []
    if first in ("no", "zero") and len(words) > 1:
        noun = words[1]
        if (noun.isalpha() and noun.islower()) or noun.istitle():
            # "no ratings yet" <-> "no rating yet": the counted noun in both numbers
            for swapped in (with_count(Decimal(2), noun), with_count(Decimal(1), noun)):
                out.append(" ".join([words[0], swapped, *words[2:]]))
        out += nothing_forms(" ".join(words[1:3]) if len(words) <= 3 else "")
    else:
        out += nothing_forms("")
    if counted:
        out += nothing_forms(counted)
    lowered = text.strip().lower()
    return [v for v in dict.fromkeys(out) if v.lower() != lowered]

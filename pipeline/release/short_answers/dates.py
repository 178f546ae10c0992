"""Dates, clock times and durations in short answers.

Dates are read by ``dateutil`` (any of "May 5, 2017", "5th of May, 2017", "Sat, 22 April 2017",
"3/21/17", "2017-05-05"; numeric dates in US order) and written in the formats the release uses,
most used first (measured on the validation file: "May 5, 2017", "May 5th, 2017", "5 May 2017", with
the weekday, without the year, abbreviated, numeric). Clock times: "2:24 a.m." <-> "2:24 AM" <-> "02:24"
<-> 24-hour. Durations: "1:56" <-> "1 minute and 56 seconds" <-> "1 min 56 sec"; "45 min" <-> "45 minutes".
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime

from dateutil import parser as date_parser

from pipeline.release.short_answers.numbers import int_to_words, parse_number, words_to_number

_MONTH_NAME = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY_NAME = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|sday|nesday|urday)?\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# What a date text may hold: weekday, month name, day, year, "of", "the", separators. Anything else
# (a time, a word) is not a date text and is left to the other rules.
_DATE_TEXT = re.compile(
    rf"^(?:(?:{_WEEKDAY_NAME}|{_MONTH_NAME}|{_DAY}|\d{{4}}|of|the)[\s,]*)+$"
    rf"|^(?:{_WEEKDAY_NAME},?\s+)?\d{{1,4}}([/.-])\d{{1,2}}\1\d{{2,4}}$",
    re.IGNORECASE,
)
_HAS_MONTH_NAME = re.compile(rf"\b{_MONTH_NAME}(?![a-z])", re.IGNORECASE)
_HAS_WEEKDAY = re.compile(rf"\b{_WEEKDAY_NAME}(?![a-z])", re.IGNORECASE)
_YEAR = re.compile(r"\b\d{4}\b|\d[/.-]\d{2}$")
_DAY_NUMBER = re.compile(r"(?<![\d/.-])\d{1,2}(?:st|nd|rd|th)?(?![\d/.-])", re.IGNORECASE)
_MONTHS = list(calendar.month_name)[1:]
_WEEKDAYS = list(calendar.day_name)


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def parse_date(text: str) -> tuple[date, bool, bool, bool] | None:
    """(date, has_year, has_day, has_weekday) for a text that is a date and nothing else, else None."""
    cleaned = text.strip().rstrip(".")
    if not _DATE_TEXT.match(cleaned):
        return None
    numeric = not _HAS_MONTH_NAME.search(cleaned)
    if numeric and not re.search(r"[/.-]", cleaned):
        return None  # "22" or "2017" alone is not a date
    try:
        first = date_parser.parse(cleaned, default=datetime(2000, 1, 1))
        second = date_parser.parse(cleaned, default=datetime(2004, 2, 2))
    except (ValueError, OverflowError):
        return None
    has_year = first.year == second.year
    has_day = first.day == second.day
    if not has_day and not numeric and not _DAY_NUMBER.search(cleaned):
        has_day = False
    if not has_year and not has_day:
        return None  # a month name alone
    has_weekday = bool(_HAS_WEEKDAY.search(cleaned))
    value = first.date() if has_year else date(2000, first.month, first.day)
    return value, has_year, has_day, has_weekday


def date_variants(text: str) -> list[str]:
    """The release's date formats for a date text; [] when it is not one."""
    parsed = parse_date(text)
    if parsed is None:
        return []
    value, has_year, has_day, has_weekday = parsed
    month = _MONTHS[value.month - 1]
    mon = month[:3]
    d, dth, y = value.day, _ordinal(value.day), value.year
    if not has_day:
        return [f"{month} {y}", f"{mon} {y}", f"{month}, {y}", f"{value.month:02d}/{y}"]
    out: list[str] = []
    if has_year:
        weekday = _WEEKDAYS[value.weekday()]
        out += [
            f"{month} {d}, {y}",
            f"{month} {dth}, {y}",
            f"{d} {month} {y}",
            f"{weekday}, {month} {d}, {y}",
            f"{weekday}, {month} {dth}, {y}",
            f"{mon} {d}, {y}",
            f"{month} {dth}",
            f"{month} {d}",
            f"{d} {month}, {y}",
            f"{dth} {month} {y}",
            f"{dth} of {month}, {y}",
            f"{weekday}, {d} {month} {y}",
            f"{mon[:3]} {dth}, {y}",
            f"{weekday[:3]}, {mon} {d}, {y}",
            f"{d} {mon} {y}",
            f"{value.month}/{d}/{y}",
            f"{value.month:02d}/{d:02d}/{y}",
            f"{value.month}/{d}/{str(y)[2:]}",
            value.isoformat(),
        ]
        if d < 10:
            out += [f"{month} {d:02d}, {y}", f"{mon} {d:02d}, {y}"]
        wd = weekday[:3]
        # the weekday the release adds or abbreviates, the date picker's "2017 Mon, Feb 13" header, and
        # day-first numeric dates ("27/05/2016", "29.12.2016")
        out += [
            f"{y} {wd}, {mon} {d}",
            f"{wd}, {d} {mon} {y}",
            f"{weekday}, {d} {mon} {y}",
            f"{weekday}, {mon} {d}, {y}",
            f"{wd}, {month} {d}, {y}",
            f"{weekday}, {month} {d}",
            f"{d} {month}",
            f"{d:02d} {mon} {y}",
            f"{d}/{value.month}/{y}",
            f"{d:02d}/{value.month:02d}/{y}",
            f"{d:02d}.{value.month:02d}.{y}",
        ]
        if has_weekday:
            out += [f"{weekday}, {month} {dth}", weekday, f"{month} {d}, {y}, {weekday}"]
    else:
        out += [f"{month} {d}", f"{month} {dth}", f"{d} {month}", f"{mon} {d}", f"{dth} {month}", f"{dth} of {month}"]
        if has_weekday:
            said = next((w for w in _WEEKDAYS if re.search(rf"\b{w[:3]}", text, re.IGNORECASE)), None)
            if said is not None:
                weekday = said
                out += [
                    f"{weekday}, {month} {d}",
                    f"{weekday}, {month} {dth}",
                    f"{weekday[:3]}, {mon} {d}",
                    weekday,
                    f"{month} {d}, {weekday}",
                    f"{month} {dth}, {weekday}",
                    f"{weekday}, {d} {month}",
                    f"{d} {month}, {weekday}",
                    f"{weekday[:3]}, {d} {mon}",
                ]
        out += [f"{value.month}/{d}", f"{d:02d} {month}", f"{d:02d} {mon}", f"{mon} {dth}", f"{month} {d:02d}"]
    return out


def weekday_variants(text: str) -> list[str]:
    """ "Thu" <-> "Thursday"."""
    word = text.strip().rstrip(".").lower()
    for name in _WEEKDAYS:
        if word in (name.lower(), name[:3].lower()) or (len(word) >= 3 and name.lower().startswith(word)):
            return [name, name[:3]]
    return []


# --- clock times --------------------------------------------------------------------------------

_CLOCK = re.compile(
    r"^(?P<h>\d{1,2})[:.](?P<m>\d{2})(?::(?P<s>\d{2}))?\s*(?P<half>[ap]\.?\s?m\.?)?(?P<rest>(?:\s+[^\d\s][^\d]*)?)$",
    re.IGNORECASE,
)
_PART_OF_DAY = re.compile(
    r"^(?P<clock>\d{1,2}:\d{2})\s+(?:in the\s+(?P<part>morning|afternoon|evening)|at\s+(?P<night>night))$", re.I
)
_O_CLOCK = re.compile(r"^(?P<h>\d{1,2})\s*(?P<half>[ap]\.?\s?m\.?)$", re.IGNORECASE)


def time_variants(text: str, *, duration_context: bool = False) -> list[str]:
    """ "2:24 a.m." <-> "2:24 AM" <-> "2:24 am" <-> "02:24 AM"; 24-hour "14:30" <-> "2:30 PM";
    "12:52 in the morning" -> "12:52 AM"."""
    stripped = text.strip()
    said = _PART_OF_DAY.match(stripped)
    if said is not None:
        half = "a.m." if (said["part"] or "").lower() == "morning" else "p.m."
        return [said["clock"], *time_variants(f"{said['clock']} {half}")]
    short = _O_CLOCK.match(stripped)
    if short is not None:
        h, half = int(short["h"]), short["half"].lower().replace(".", "").replace(" ", "")[0]
        if not 1 <= h <= 12:
            return []
        return [
            *(f"{h} {half.upper()}M", f"{h} {half}.m.", f"{h}{half}m", f"{h}:00 {half.upper()}M", f"{h}:00 {half}.m."),
            f"{h} o'clock",
        ]
    match = _CLOCK.match(stripped)
    if match is None or ("." in stripped.split()[0][:3] and not match["half"]):
        return []  # "0.00", "14.05": a number, not a clock, unless "a.m."/"p.m." follows
    h, m = int(match["h"]), match["m"]
    sec = f":{match['s']}" if match["s"] else ""
    rest = match["rest"] or ""
    if (m and int(m) > 59) or h > 24:
        return []
    if match["half"]:
        half = match["half"].lower().replace(".", "").replace(" ", "")[0]
        if h > 12:
            h24 = h
            h = h - 12
        else:
            h24 = (h % 12) + (12 if half == "p" else 0)
    elif duration_context or rest:
        return []
    elif h > 12 or h == 0:
        h24, h, half = h, (h % 12) or 12, "p" if h >= 12 else "a"
    else:
        return [f"{h:02d}:{m}{sec}", f"{h}:{m}{sec}"] if match["h"].startswith("0") or h < 10 else []
    clock = f"{h}:{m}{sec}"
    padded = f"{h:02d}:{m}{sec}"
    up = f"{half.upper()}M"
    dotted = f"{half}.m."
    out = [
        f"{clock} {up}",
        f"{clock} {dotted}",
        f"{clock} {half}m",
        f"{clock}{half}m",
        f"{clock}{up}",
        f"{padded} {up}",
        f"{h24:02d}:{m}{sec}",
        f"{h24}:{m}{sec}",
    ]
    if sec:
        out += [f"{h}:{m} {up}", f"{h}:{m} {dotted}"]
    if match["half"]:
        out.append(clock)  # "12:47 a.m." -> "12:47": the release often leaves the half of the day out
    if m == "00" and not sec:
        out += [f"{h} {up}", f"{h} {dotted}", f"{h}{half}m", f"{h} o'clock"]  # "1:00 AM" -> "1 AM", "1 o'clock"
    if rest.strip():
        # "6:30 pm Eastern Time", "8:41pm EDT": the time zone is optional
        return [f"{o}{rest}" for o in out] + out[:4]
    return out


# --- durations ----------------------------------------------------------------------------------

_UNITS = {
    "years": ("year", ("y", "yr", "yrs", "year", "years")),
    "months": ("month", ("mo", "mos", "month", "months")),
    "weeks": ("week", ("w", "wk", "wks", "week", "weeks")),
    "days": ("day", ("d", "day", "days")),
    "hours": ("hour", ("h", "hr", "hrs", "hour", "hours")),
    "minutes": ("minute", ("m", "min", "mins", "minute", "minutes")),
    "seconds": ("second", ("s", "sec", "secs", "second", "seconds")),
}
_CLOCK_UNITS = ("hours", "minutes", "seconds")
_SHORT = {"hours": ("hr", "hrs", "h"), "minutes": ("min", "mins", "m"), "seconds": ("sec", "secs", "s")}
_UNIT_OF = {alias: name for name, (_, aliases) in _UNITS.items() for alias in aliases}
_PART = re.compile(
    r"(?:\band\s+)?(?P<n>\d+(?:\.\d+)?\s*|\b[a-z]+(?:[\s-][a-z]+)*?\s+)(?P<unit>"
    + "|".join(sorted(_UNIT_OF, key=len, reverse=True))
    + r")\b\.?",
    re.IGNORECASE,
)
_SUFFIXES = ("ago", "left", "remaining", "long", "elapsed")
# Words in a question that make "1:56" a duration rather than a clock time.
DURATION_CUES = re.compile(
    r"\b(?:duration|long|length|elapsed|left|remaining|played|playing|timer|recorded|recording|how much time|"
    r"lasts?|run(?:ning)? time|progress|finished|completed)\b",
    re.IGNORECASE,
)


def _parse_duration(text: str, *, duration_context: bool) -> tuple[dict[str, int], str, bool] | None:
    """({unit: amount}, suffix, was_clock) of a duration text, else None."""
    stripped = text.strip().rstrip(".")
    suffix = ""
    for word in _SUFFIXES:
        if stripped.lower().endswith(" " + word):
            suffix = word
            stripped = stripped[: -len(word) - 1].strip()
            break
    # "0:04 seconds", "00:03:41 minutes": a clock reading with its unit said after it
    stripped = re.sub(r"^(\d{1,2}:\d{2}(?::\d{2})?)\s+(?:hours|minutes|mins|seconds|secs)$", r"\1", stripped)
    clock = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", stripped)
    if clock is not None:
        if not duration_context and not stripped.startswith(("0:", "00:")):
            return None
        a, b = int(clock[1]), int(clock[2])
        if b > 59 or (clock[3] is not None and int(clock[3]) > 59):
            return None
        if clock[3] is not None:
            return {"hours": a, "minutes": b, "seconds": int(clock[3])}, suffix, True
        return {"minutes": a, "seconds": b}, suffix, True
    parts: dict[str, int] = {}
    position = 0
    for match in _PART.finditer(stripped):
        gap = stripped[position : match.start()].strip(" ,").lower()
        if gap not in ("", "and"):
            return None
        amount = match["n"].strip()
        value = parse_number(amount) if amount[0].isdigit() else words_to_number(amount)
        if value is None or value != value.to_integral_value():
            return None
        name = _UNIT_OF[match["unit"].lower()]
        if name in parts:
            return None
        parts[name] = int(value)
        position = match.end()
    if not parts or stripped[position:].strip():
        return None
    if len(parts) == 1 and next(iter(parts)) not in _CLOCK_UNITS:
        return None  # "30 days" alone is a quantity (numbers.py), not a duration to spell out
    return parts, suffix, False


def _joined(parts: list[str]) -> list[str]:
    if len(parts) == 1:
        return parts
    out = [" ".join(parts[:-1]) + f" and {parts[-1]}", " ".join(parts), ", ".join(parts[:-1]) + f", and {parts[-1]}"]
    if len(parts) > 2:
        out += [" and ".join(parts), ", ".join(parts)]  # "1 hour and 29 minutes and 55 seconds"
    return out


def duration_variants(text: str, *, duration_context: bool = False) -> list[str]:
    """ "1:56" <-> "1 minute and 56 seconds" <-> "1 minute 56 seconds"; "45 min" <-> "45 minutes";
    "7 months 30 days" <-> "7 months and 30 days"."""
    parsed = _parse_duration(text, duration_context=duration_context)
    if parsed is None:
        return []
    parts, suffix, was_clock = parsed
    present = [(u, parts[u]) for u in _UNITS if u in parts]
    every = present
    if len(present) > 1 and any(v == 0 for _, v in present):
        present = [(u, v) for u, v in present if v] or present[-1:]  # "0 minutes 25 seconds" -> "25 seconds"
    tail = f" {suffix}" if suffix else ""

    def name(unit: str, value: int) -> str:
        return _UNITS[unit][0] if value == 1 else unit

    spelled = [f"{v} {name(u, v)}" for u, v in present]
    words = [f"{int_to_words(v)} {name(u, v)}" for u, v in present]
    out = _joined(spelled) + _joined(words)
    clock_only = all(u in _CLOCK_UNITS for u, _ in present)
    if clock_only:
        out.append(" ".join(f"{v} {_SHORT[u][0] if v == 1 else _SHORT[u][1]}" for u, v in present))
        out.append(" ".join(f"{v}{_SHORT[u][2]}" for u, v in present))
        if len(present) == 1:
            unit, value = present[0]
            out += [f"{value} {_SHORT[unit][0]}", f"{value}{_SHORT[unit][0]}", f"{value}{_SHORT[unit][1]}"]
    h, m, sec = parts.get("hours", 0), parts.get("minutes", 0), parts.get("seconds", 0)
    if clock_only and (was_clock or duration_context):
        if "seconds" in parts:
            out += (
                [f"{h}:{m:02d}:{sec:02d}", f"{h:02d}:{m:02d}:{sec:02d}"]
                if h
                else [
                    f"{m}:{sec:02d}",
                    f"{m:02d}:{sec:02d}",
                    f"00:{m:02d}:{sec:02d}",
                    # the clock reading with its unit, and its parts zero-padded
                    f"{m}:{sec:02d} minutes" if m else f"{m:02d}:{sec:02d} seconds",
                    f"{m:02d} minutes and {sec:02d} seconds",
                ]
            )
        elif h:
            out += [f"{h}:{m:02d}", f"{h:02d}:{m:02d}"]
        elif m:
            out += [f"{m}:00", f"{m:02d}:00"]
    if every != present or (was_clock and len(present) == 1 and "seconds" in parts):
        # the release keeps the zero parts too: "1:00" -> "1 minute and 0 seconds", "13h 0m"
        full = [f"{v} {name(u, v)}" for u, v in every]
        out += _joined(full)
        if all(u in _CLOCK_UNITS for u, _ in every):
            out.append(" ".join(f"{v}{_SHORT[u][2]}" for u, v in every))
    if present == [("minutes", m)] and m and m % 60 == 0:
        out.append(f"{m // 60} {name('hours', m // 60)}")
    if present == [("hours", h)] and h:
        out.append(f"{h * 60} minutes")
        if h == 1:
            out.append("an hour")
    forms = [f"{o}{tail}" for o in dict.fromkeys(out)]
    if tail:
        forms += list(dict.fromkeys(out))[:3]  # "12 hours ago" -> "12 hours", "12 hrs"
        other = {"left": "remaining", "remaining": "left"}.get(suffix)
        if other:
            forms += [f"{o} {other}" for o in list(dict.fromkeys(out))[:2]]  # "3 days left" <-> "3 days remaining"
    return forms

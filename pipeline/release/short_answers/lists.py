"""Enumerations and phone numbers in short answers.

Lists: the release writes one enumeration as "A, B, C", "A, B and C", "A, B, and C", "A, B or C" and the
same with every item in quotes. Phone numbers are read and written by ``phonenumbers`` (Google's
libphonenumber), national numbers read as US ones as the release's screens are.
"""

from __future__ import annotations

import re

import phonenumbers

_QUOTED_ITEM = re.compile(r'"([^"]+)"')
_QUOTED_LIST = re.compile(r'^"[^"]+"(?:\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)"[^"]+")+$')
_LAST_JOIN = re.compile(r"(?:,\s+|\s+)(and|or)\s+(?=(?:[^,]|,(?!\s))+$)")


def split_list(text: str) -> tuple[list[str], str] | None:
    """(items, the conjunction or "") of an enumeration, else None.

    Quoted items ('"A", "B" and "C"') are always a list; unquoted ones only when split by commas
    or a final "and"/"or" with at least two commas or a conjunction (never "San Francisco, CA").
    """
    stripped = text.strip()
    if _QUOTED_LIST.match(stripped):
        items = _QUOTED_ITEM.findall(stripped)
        conjunction = (
            "and"
            if re.search(r'"\s*,?\s+and\s+"', stripped)
            else "or"
            if re.search(r'"\s*,?\s+or\s+"', stripped)
            else ""
        )
        return items, conjunction
    if '"' in stripped or len(stripped) > 300:
        return None
    match = _LAST_JOIN.search(stripped)
    conjunction = ""
    head, last = stripped, ""
    if match is not None:
        conjunction = match[1].lower()
        head, last = stripped[: match.start()], stripped[match.end() :]
    items = [i.strip() for i in re.split(r",\s+", head)] + ([last.strip()] if last else [])
    if len(items) < 2 or any(not i or len(i.split()) > 6 for i in items):
        return None
    return items, conjunction


def list_variants(items: list[str], conjunction: str = "") -> list[str]:
    """The release's ways to write an enumeration of these items."""
    if len(items) < 2:
        return []
    quoted = [f'"{i}"' for i in items]
    out: list[str] = []
    for parts in (items, quoted):
        head = ", ".join(parts[:-1])
        out += [f"{head}, {parts[-1]}", f"{head} and {parts[-1]}"]
        if len(parts) > 2:
            out.append(f"{head}, and {parts[-1]}")
        out.append(f"{head} or {parts[-1]}")
    if conjunction == "or":
        out.insert(0, out.pop(3 if len(items) > 2 else 2))
    if len(items) > 2:
        out += [" and ".join(items), " or ".join(items)]  # "low and medium and high"
    else:
        out += [f"{items[1]} and {items[0]}", f"{items[1]}, {items[0]}"]  # the release names two in either order
    return out


_PHONE_CHARS = re.compile(r"^\+?[\d\s().-]{7,20}$")


def phone_variants(text: str) -> list[str]:
    """ "(415) 579-1543" <-> "415-579-1543" <-> "+1 415-579-1543" <-> "4155791543" <-> "+14155791543"."""
    stripped = text.strip()
    if not _PHONE_CHARS.match(stripped) or len(re.sub(r"\D", "", stripped)) < 7:
        return []
    try:
        number = phonenumbers.parse(stripped, "US")
    except phonenumbers.NumberParseException:
        return []
    if not phonenumbers.is_possible_number(number):
        return []
    fmt = phonenumbers.PhoneNumberFormat
    national = phonenumbers.format_number(number, fmt.NATIONAL)
    international = phonenumbers.format_number(number, fmt.INTERNATIONAL)
    e164 = phonenumbers.format_number(number, fmt.E164)
    digits = re.sub(r"\D", "", national)
    code = str(number.country_code)
    out = [national, international, e164, digits, f"{code}{digits}", re.sub(r"[()]", "", national).replace(" ", "-")]
    dashed = re.sub(r"^\((\d+)\)\s*", r"\1-", national)
    out += [dashed, f"{code}-{dashed}", f"+{code} {dashed}", f"+{code} {digits}"]
    return list(dict.fromkeys(o for o in out if o != stripped))

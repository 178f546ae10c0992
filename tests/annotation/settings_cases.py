"""Values at and just outside every declared setting's bounds, derived from the declarations
(``annotation.models.projects.SETTINGS``): a new setting gets its cases without a test edit.

``accepted(setting)``: changes (a dict of settings) that must be stored; ``refused(setting)``: a
value that must be refused with an error on the setting's own field. The splits keep their sum:
a split at a bound comes with the other two adjusted.
"""

from __future__ import annotations

import math
from typing import Any

from annotation.models.declarations import Choice, Flag, Line, Number, Prose, Secret, Setting, Url, WholeNumber
from annotation.models.projects import SETTINGS

SPLITS = ("split_train", "split_validation", "split_test")


def with_splits(name: str, value: Any) -> dict[str, Any]:
    """``{name: value}``, and for a split the other two making the sum 100 (0 for the last)."""
    if name not in SPLITS:
        return {name: value}
    first, second = (other for other in SPLITS if other != name)
    return {name: value, first: 100 - value, second: 0}


def just_outside(setting: Setting) -> list[Any]:
    """The nearest values outside the range (for a number: the next float beyond each bound)."""
    if isinstance(setting, WholeNumber):
        return [setting.low - 1, setting.high + 1]
    if isinstance(setting, Number):
        return [math.nextafter(setting.low, -math.inf), math.nextafter(setting.high, math.inf)]
    return []


def accepted(setting: Setting) -> list[dict[str, Any]]:
    if isinstance(setting, WholeNumber | Number):
        return [with_splits(setting.name, value) for value in (setting.low, setting.high)]
    if isinstance(setting, Choice):
        return [{setting.name: value} for value in setting.choices.values]
    if isinstance(setting, Flag):
        return [{setting.name: True}, {setting.name: False}]
    if isinstance(setting, Line):
        return [{setting.name: "x"}, {setting.name: "x" * setting.max_length}]
    if isinstance(setting, Prose):
        return [{setting.name: ""}, {setting.name: "a note\non two lines"}]
    if isinstance(setting, Url):
        return [{setting.name: ""}, {setting.name: "http://127.0.0.1:8765"}]
    if isinstance(setting, Secret):
        return [{setting.name: "s3cret"}]
    raise AssertionError(f"no cases for {type(setting).__name__}: add them here")


def refused(setting: Setting) -> list[Any]:
    """Values the API and the page both refuse (a flag has none a form can send: a checkbox is
    on or off; the API's wrong types are in the API's own tests)."""
    if isinstance(setting, WholeNumber | Number):
        return just_outside(setting)
    if isinstance(setting, Choice):
        return ["bogus", ""]
    if isinstance(setting, Line):
        return ["x" * (setting.max_length + 1), ""]
    if isinstance(setting, Flag | Prose | Secret):
        return []
    if isinstance(setting, Url):
        return ["ftp://example.org/", "not an address"]
    raise AssertionError(f"no cases for {type(setting).__name__}: add them here")


EVERY_SETTING = list(SETTINGS)
IDS = [setting.name for setting in EVERY_SETTING]


def page_data(project: Any, **changes: Any) -> dict[str, Any]:
    """The settings page's form as a browser posts it: every setting's current value with
    ``changes`` applied (a flag that is off is left out, like an unticked checkbox)."""
    values = {setting.name: getattr(project, setting.name) for setting in SETTINGS}
    values.update(changes)
    return {name: ("on" if value is True else value) for name, value in values.items() if value is not False}

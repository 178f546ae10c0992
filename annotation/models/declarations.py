"""How a project setting is declared, once: its kind, range or choices, default, help text and the
group the settings page shows it in (the table itself is ``annotation.models.projects.SETTINGS``).

A declaration gives everything else what it needs, so that no range is written twice:

* the model field (``Settings.whole`` and the other accessors): its default and help text, and its
  range as ``MinValueValidator``/``MaxValueValidator``, which ``full_clean``, the ModelForms (the
  lead's settings page, the Django admin) and the API's ModelSerializer all run, and which
  drf-spectacular shows as the schema's ``minimum``/``maximum``;
* the database's check constraint for the same range or choices (``Settings.constraints``);
* the form fields' bounds (``form_options``: the same messages, and ``min``/``max`` in the HTML);
* the groups of the settings page and the admin (``Settings.groups``) and the table of
  docs/leads.md (a test compares it).

Adding a setting is one entry in the table, one line in the model, and a migration.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.db.models import Q
from django.db.models.expressions import Combinable

__all__ = [
    "Choice",
    "Flag",
    "Line",
    "Number",
    "Prose",
    "Secret",
    "Setting",
    "Settings",
    "Url",
    "WholeNumber",
    "validate_finite",
]


def validate_finite(value: Any) -> None:
    """A number, not NaN or an infinity (their comparisons would slip past any range:
    ``nan < 0`` and ``nan > 1`` are both false)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError("Enter a finite number.", code="not_finite")


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting: ``name`` is the model field's, ``group`` the heading it is shown under,
    ``help`` the text the page, the admin, the API schema and the docs show."""

    name: str
    group: str
    help: str

    def constraint(self, prefix: str) -> models.CheckConstraint | None:
        """The database's own check of the declared range or choices (``None``: nothing to check)."""
        return None

    def form_options(self) -> dict[str, Any]:
        """Keyword arguments for the setting's form field (a ModelForm's ``formfield``)."""
        return {}

    def default_text(self) -> str:
        return ""

    def allowed_text(self) -> str:
        return ""


@dataclass(frozen=True, kw_only=True)
class _Ranged(Setting):
    low: float
    high: float

    def validators(self) -> list[Any]:
        return [MinValueValidator(self.low), MaxValueValidator(self.high)]

    def constraint(self, prefix: str) -> models.CheckConstraint:
        # NaN passes ``>= low`` in PostgreSQL (it sorts above every number) but never ``<= high``.
        condition = Q(**{f"{self.name}__gte": self.low}) & Q(**{f"{self.name}__lte": self.high})
        return models.CheckConstraint(condition=condition, name=f"{prefix}_{self.name}_range")

    def form_options(self) -> dict[str, Any]:
        return {"min_value": self.low, "max_value": self.high}

    def allowed_text(self) -> str:
        return f"{self.low:g}–{self.high:g}"


@dataclass(frozen=True, kw_only=True)
class WholeNumber(_Ranged):
    """An integer from ``low`` to ``high``. ``column`` is how it is stored (small unless a wider
    column predates the declaration)."""

    default: int
    low: int
    high: int
    column: type[models.IntegerField[Any, Any]] = models.PositiveSmallIntegerField

    def field(self) -> models.IntegerField[float | int | str | Combinable, int]:
        return self.column(default=self.default, help_text=self.help, validators=self.validators())

    def default_text(self) -> str:
        return str(self.default)


@dataclass(frozen=True, kw_only=True)
class Number(_Ranged):
    """A finite real number from ``low`` to ``high`` (a share is 0–1)."""

    default: float

    def validators(self) -> list[Any]:
        return [validate_finite, *super().validators()]

    def field(self) -> models.FloatField[float | int | str | Combinable, float]:
        return models.FloatField(default=self.default, help_text=self.help, validators=self.validators())

    def default_text(self) -> str:
        return f"{self.default:g}"


@dataclass(frozen=True, kw_only=True)
class Flag(Setting):
    """On or off."""

    default: bool

    def field(self) -> models.BooleanField[bool | Combinable, bool]:
        return models.BooleanField(default=self.default, help_text=self.help)

    def default_text(self) -> str:
        return "on" if self.default else "off"

    def allowed_text(self) -> str:
        return "on or off"


@dataclass(frozen=True, kw_only=True)
class Choice(Setting):
    """One of ``choices``' values."""

    choices: type[models.TextChoices]
    default: str
    max_length: int = 16

    def field(self) -> models.CharField[str | int | Combinable, str]:
        return models.CharField(
            max_length=self.max_length, choices=self.choices.choices, default=self.default, help_text=self.help
        )

    def constraint(self, prefix: str) -> models.CheckConstraint:
        return models.CheckConstraint(
            condition=Q(**{f"{self.name}__in": self.choices.values}), name=f"{prefix}_{self.name}_valid"
        )

    def default_text(self) -> str:
        return f"`{self.default}`"

    def allowed_text(self) -> str:
        return ", ".join(f"`{value}`" for value in self.choices.values)


@dataclass(frozen=True, kw_only=True)
class Line(Setting):
    """One line of text, required, up to ``max_length`` characters."""

    max_length: int

    def field(self) -> models.CharField[str | int | Combinable, str]:
        return models.CharField(max_length=self.max_length, help_text=self.help)

    def default_text(self) -> str:
        return "none (required)"

    def allowed_text(self) -> str:
        return f"text, 1–{self.max_length} characters"


@dataclass(frozen=True, kw_only=True)
class Prose(Setting):
    """Free text, may be empty."""

    def field(self) -> models.TextField[str | Combinable, str]:
        return models.TextField(blank=True, help_text=self.help)

    def default_text(self) -> str:
        return "empty"

    def allowed_text(self) -> str:
        return "text"


@dataclass(frozen=True, kw_only=True)
class Url(Setting):
    """An http(s) address, or empty (off)."""

    max_length: int = 500

    def field(self) -> models.CharField[str | int | Combinable, str]:
        return models.CharField(
            max_length=self.max_length, blank=True, default="", help_text=self.help, validators=[validate_http_url]
        )

    def default_text(self) -> str:
        return "empty (off)"

    def allowed_text(self) -> str:
        return f"an http(s) address, up to {self.max_length} characters, or empty"


@dataclass(frozen=True, kw_only=True)
class Secret(Setting):
    """A credential (an API token): written by a lead, never shown again (the API and the page
    take it but do not return it; an empty value on the page keeps the stored one)."""

    max_length: int = 500

    def field(self) -> models.CharField[str | int | Combinable, str]:
        return models.CharField(max_length=self.max_length, blank=True, default="", help_text=self.help)

    def default_text(self) -> str:
        return "empty"

    def allowed_text(self) -> str:
        return f"text, up to {self.max_length} characters; write-only"


def validate_http_url(value: Any) -> None:
    """Empty, or an absolute http(s) address (the backends are called with it)."""
    if value in ("", None):
        return
    URLValidator(schemes=["http", "https"])(value)


S = TypeVar("S", bound=Setting)


@dataclass(frozen=True)
class Settings:
    """The table: every setting once, in the order the settings page shows them (groups in the
    order of their first setting). The accessors build a model field from its declaration and
    refuse a declaration of another kind (the model then fails to import)."""

    prefix: str
    declared: tuple[Setting, ...]
    by_name: dict[str, Setting] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by_name = {setting.name: setting for setting in self.declared}
        if len(by_name) != len(self.declared):
            raise ValueError("A setting is declared twice.")
        object.__setattr__(self, "by_name", by_name)

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.declared)

    def __getitem__(self, name: str) -> Setting:
        return self.by_name[name]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(setting.name for setting in self.declared)

    def groups(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        titles = list(dict.fromkeys(setting.group for setting in self.declared))
        return tuple((title, tuple(s.name for s in self.declared if s.group == title)) for title in titles)

    def constraints(self) -> list[models.CheckConstraint]:
        found = (setting.constraint(self.prefix) for setting in self.declared)
        return [constraint for constraint in found if constraint is not None]

    def form_options(self, name: str) -> dict[str, Any]:
        """The form field's options for model field ``name`` (none for a field that is not a setting)."""
        setting = self.by_name.get(name)
        return setting.form_options() if setting is not None else {}

    def _of(self, kind: type[S], name: str) -> S:
        setting = self.by_name[name]
        if not isinstance(setting, kind):
            raise TypeError(f"{name} is declared as {type(setting).__name__}, not {kind.__name__}.")
        return setting

    def whole(self, name: str) -> models.IntegerField[float | int | str | Combinable, int]:
        return self._of(WholeNumber, name).field()

    def number(self, name: str) -> models.FloatField[float | int | str | Combinable, float]:
        return self._of(Number, name).field()

    def flag(self, name: str) -> models.BooleanField[bool | Combinable, bool]:
        return self._of(Flag, name).field()

    def choice(self, name: str) -> models.CharField[str | int | Combinable, str]:
        return self._of(Choice, name).field()

    def line(self, name: str) -> models.CharField[str | int | Combinable, str]:
        return self._of(Line, name).field()

    def prose(self, name: str) -> models.TextField[str | Combinable, str]:
        return self._of(Prose, name).field()

    def url(self, name: str) -> models.CharField[str | int | Combinable, str]:
        return self._of(Url, name).field()

    def secret(self, name: str) -> models.CharField[str | int | Combinable, str]:
        return self._of(Secret, name).field()

    @property
    def secrets(self) -> tuple[str, ...]:
        """The write-only settings (never rendered back to anyone)."""
        return tuple(setting.name for setting in self.declared if isinstance(setting, Secret))

"""Stage name (as in the API) -> its definition, in the pipeline's order.

Every module of this package that defines a ``StageDefinition`` subclass with its own
``name`` is a stage module: the registry imports them all, so adding a stage touches no
file here. The order is the one of ``annotation.models.Stage`` (the enum that the database
constraints name), and every value of that enum must have exactly one definition.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from annotation.exceptions import ApplicationError, NotFoundError
from annotation.models import Stage

from .base import StageDefinition
from .units import UNIT_OF_STAGE


def _subclasses(cls: type[StageDefinition]) -> list[type[StageDefinition]]:
    found: list[type[StageDefinition]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


@cache
def stages() -> dict[str, StageDefinition]:
    """Every stage's definition, by name, in pipeline order (discovered once, on first use)."""
    package = importlib.import_module(__package__ or "pipeline.stages")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    found: dict[str, StageDefinition] = {}
    for cls in _subclasses(StageDefinition):
        name = cls.__dict__.get("name")
        if name is None:
            continue
        if name in found:
            raise ImproperlyConfigured(
                f"Two definitions of stage {name!r}: {type(found[name]).__name__}, {cls.__name__}"
            )
        found[str(name)] = cls()
    missing, unknown = set(Stage.values) - set(found), set(found) - set(Stage.values)
    if missing or unknown:
        raise ImproperlyConfigured(
            f"Stages without a definition: {sorted(missing)}; not in the Stage enum: {sorted(unknown)}"
        )
    for name, definition in found.items():
        _check_wire(name, definition)
    UNIT_OF_STAGE.update({name: definition.unit for name, definition in found.items()})
    return {name: found[name] for name in Stage.values}


def _check_wire(name: str, definition: StageDefinition) -> None:
    """A stage declares its own wire format: a submit serializer, and a payload serializer whose
    ``stage`` is ``wire.stage_name_field(name)`` (a one-value enum: how clients tell payloads apart)."""
    payload = getattr(definition, "payload_serializer", None)
    stage_field = getattr(payload, "_declared_fields", {}).get("stage")
    if getattr(definition, "submit_serializer", None) is None or payload is None:
        raise ImproperlyConfigured(f"Stage {name!r} declares no submit_serializer or payload_serializer.")
    if not isinstance(stage_field, serializers.ChoiceField) or list(stage_field.choices) != [name]:
        raise ImproperlyConfigured(
            f"Stage {name!r}: {payload.__name__} must declare stage = stage_name_field({name!r})."
        )


def stage_filter(value: str | None) -> str | None:
    """A ``stage`` filter as given (a query parameter): empty, or a stage's name; else
    ``ApplicationError`` (400) naming the stages."""
    if not value:
        return None
    if value not in stages():
        raise ApplicationError(f"The stage is one of {', '.join(stages())}.", field="stage")
    return value


def stage_get(name: str) -> StageDefinition:
    """The stage called ``name``; an unknown name is ``NotFoundError`` (404), naming the stages."""
    definition = stages().get(name)
    if definition is None:
        raise NotFoundError(f"Unknown stage {name!r}; stages are {', '.join(stages())}.", field="stage")
    return definition

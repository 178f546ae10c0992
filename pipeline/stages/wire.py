"""The engine's wire format: the serializers every stage builds its own from.

A stage's submit serializer (in its module) is the one source of its body: it validates
and normalises a submission (``StageDefinition.clean`` runs it), and drf-spectacular
documents it. The same holds for the payload of ``next``: a stage's payload serializer
renders it, and the schema shows it. These serializers are strict where JSON is strict:
a string is text, ``true``/``false`` are booleans, an integer is an integer (no coercion
from strings), and keys a body does not define are refused.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.settings import api_settings

from annotation.exceptions import ApplicationError

# Limits of every stage's texts (one constant each: serializers, forms, the page and the docs read them).
TEXT_MAX = 1000
NOTE_MAX = 2000
FULL_ANSWER_MAX = 5000


class TextField(serializers.CharField):
    """Text, normalised to one line with single spaces (what annotators meant).

    Not text: "This must be text."; empty after normalising: "This may not be empty."
    (unless ``allow_blank``); longer than ``max_length`` after normalising: refused."""

    default_error_messages = {
        "text": "This must be text.",
        "blank": "This may not be empty.",
        "long": "This is longer than {max_length} characters.",
    }

    def __init__(self, *, max_length: int = TEXT_MAX, **kwargs: Any) -> None:
        super().__init__(max_length=max_length, **kwargs)
        self.validators = []  # the length is checked on the normalised text, below

    def run_validation(self, data: Any = empty) -> Any:
        is_empty, data = self.validate_empty_values(data)
        if is_empty:
            return data
        if not isinstance(data, str):
            self.fail("text")
        text = " ".join(data.split())
        if not text and not self.allow_blank:
            self.fail("blank")
        if self.max_length is not None and len(text) > self.max_length:
            self.fail("long", max_length=self.max_length)
        return text


class FlagField(serializers.BooleanField):
    """``true`` or ``false``, nothing else ("This must be true or false.")."""

    default_error_messages = {"invalid": "This must be true or false."}

    def run_validation(self, data: Any = empty) -> Any:
        is_empty, data = self.validate_empty_values(data)
        if is_empty:
            return data
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class WholeNumberField(serializers.IntegerField):
    """A JSON integer (not a boolean, not a string of digits)."""

    default_error_messages = {"invalid": "This must be a whole number."}

    def run_validation(self, data: Any = empty) -> Any:
        is_empty, data = self.validate_empty_values(data)
        if is_empty:
            return data
        if type(data) is not int:
            self.fail("invalid")
        self.run_validators(data)
        return data


class StrictSerializer(serializers.Serializer):
    """A JSON object with exactly the declared keys (an unknown key is refused by name)."""

    default_error_messages = {"unknown": "Unknown field {name!r}.", "object": "This must be a JSON object."}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [self.error_messages["object"]]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({unknown[0]: [self.error_messages["unknown"].format(name=unknown[0])]})
        return super().to_internal_value(data)


def first_error(errors: Any, path: str = "") -> tuple[str, str] | None:
    """The first error of a DRF error structure as ``(path, message)``, the path written as
    the API names fields: ``elements[1].bounds``, ``questions[0]``."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == api_settings.NON_FIELD_ERRORS_KEY:
                sub = path
            elif isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}" if path else str(key)
            found = first_error(value, sub)
            if found is not None:
                return found
        return None
    if isinstance(errors, list):
        if errors and all(isinstance(e, str) for e in errors):
            return path, str(errors[0])
        for i, item in enumerate(errors):
            found = first_error(item, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(errors, str):
        return path, str(errors)
    return None


def validated(serializer: serializers.Serializer) -> dict[str, Any]:
    """The serializer's validated data, or ``ApplicationError`` naming the first bad field."""
    if serializer.is_valid():
        return dict(serializer.validated_data)
    found = first_error(serializer.errors) or ("body", "Invalid body.")
    raise ApplicationError(found[1], field=found[0] or "body")


_RENDERERS: dict[type[serializers.Serializer], serializers.Serializer] = {}


def render(serializer_class: type[serializers.Serializer], instance: Any) -> dict[str, Any]:
    """``serializer_class(instance).data`` without building the serializer's fields again: one
    instance per class renders every response (its fields are bound once and hold no state of a
    call). Measured: building the fields cost ~0.25 ms per response on the leasing hot path."""
    renderer = _RENDERERS.get(serializer_class)
    if renderer is None:
        renderer = _RENDERERS[serializer_class] = serializer_class()
        renderer.fields  # noqa: B018  # bind the fields now, in one thread
    return dict(renderer.to_representation(instance))


# --- what ``next`` returns ----------------------------------------------------------------


class CandidateSerializer(serializers.Serializer):
    vh_index = serializers.IntegerField(help_text="pre-order index of the VH node")
    bounds = serializers.ListField(child=serializers.IntegerField(), help_text="[left, top, right, bottom] in pixels")
    text = serializers.CharField(allow_blank=True)
    type = serializers.CharField()
    class_name = serializers.CharField(allow_blank=True)


@extend_schema_field(CandidateSerializer(many=True))
class CandidateListField(serializers.Field):
    """The screen's candidates as the selector built them (hundreds on a real screen: they
    pass through as they are, documented by ``CandidateSerializer``)."""

    def to_representation(self, value: Any) -> Any:
        return value


class ScreenPayloadSerializer(serializers.Serializer):
    rico_id = serializers.CharField()
    app = serializers.CharField(help_text="Android package")
    image_url = serializers.CharField()
    overlay_url = serializers.CharField()
    vh_url = serializers.CharField(help_text="every shown VH node (containers too), for drawing the whole VH")
    width = serializers.IntegerField()
    height = serializers.IntegerField()
    candidates = CandidateListField()


class QuestionBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()


def stage_name_field(name: str) -> serializers.ChoiceField:
    """A payload's ``stage``: its stage's name, the one value it can have. The schema shows it as
    a one-value enum, so that the payloads of ``next`` are a discriminated union a generated client
    tells apart by their content (one typed model per stage), not only by the discriminator."""
    return serializers.ChoiceField(choices=[str(name)], help_text="the stage (tells the payloads apart)")


# Each stage declares its own payload (``StageDefinition.payload_serializer``): this class with
# ``stage = stage_name_field(<its name>)`` (the registry checks it) and the stage's own fields.
class AssignmentPayloadSerializer(serializers.Serializer):
    """What ``next`` (and ``GET /api/assignments/<id>/``) returns for one stage: ``stage`` names
    the stage (one value per payload), the other fields are the work."""

    id = serializers.IntegerField()
    stage: serializers.Field = serializers.CharField()  # each stage's: stage_name_field
    status = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    screen = ScreenPayloadSerializer()
    draft = serializers.DictField(help_text="the stored draft ({} when none)")


class AssignmentResultSerializer(serializers.Serializer):
    """The answer to submit, skip, release, extend and draft (the same content, the same answer)."""

    id = serializers.IntegerField()
    stage = serializers.CharField()
    status = serializers.CharField(help_text="leased, submitted, skipped, released or expired")
    lease_expires_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    submission = serializers.DictField(allow_null=True, help_text="the accepted, normalised body")
    skip_reason = serializers.CharField(allow_blank=True)
    draft = serializers.DictField()

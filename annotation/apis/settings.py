"""Project settings API: what the lead's settings page does, for scripts.

Who may use it: leads of the project and site admins (annotators and reviewers 403, non-members
404, anonymous callers 403). The page (``frontend.views.manage``) calls the same service.

The serializer is a ModelSerializer over the declared settings (``annotation.models.projects.SETTINGS``):
each field takes its range, choices and help from the model field its declaration built, so the
API refuses exactly what the page refuses and the schema shows the same ``minimum``/``maximum``.
Its fields are strict where JSON is strict: a whole number is a JSON integer (not ``30.0``,
``1e6``, ``"30"`` or ``true``), a number is a JSON number (not a string or a boolean), a flag is
``true`` or ``false``, text is a string. A key that is not a setting (``slug``, ``split_seed``,
``id``, ...) is refused by name, never silently dropped. A refused PATCH changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.db import models
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis.errors import ErrorSerializer
from annotation.models import Project
from annotation.models.projects import SETTINGS
from annotation.permissions import IsAuthenticated, project_get_for_lead
from annotation.services.projects import PROJECT_SETTINGS, project_settings_update, setting_refusal

TAGS = ["settings"]
ERRORS: dict[int, Any] = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="a setting out of its range or of the wrong type, or not a setting (`field` says which)",
    ),
    403: OpenApiResponse(ErrorSerializer, description="not logged in, or not a lead of the project"),
    404: OpenApiResponse(ErrorSerializer, description="no such project, or not a member"),
}


class WholeNumberField(serializers.IntegerField):
    """A JSON integer: no coercion from floats, strings or booleans."""

    default_error_messages = {"invalid": "This must be a whole number."}

    def to_internal_value(self, data: Any) -> int:
        if type(data) is not int:
            self.fail("invalid")
        return data


class NumberField(serializers.FloatField):
    """A JSON number (an integer or a float), finite: no strings, no booleans."""

    default_error_messages = {"invalid": "This must be a number."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        try:
            value = float(data)
        except OverflowError:  # an integer too large for a float
            self.fail("overflow")
        if not math.isfinite(value):
            self.fail("invalid")
        return value


class FlagField(serializers.BooleanField):
    """``true`` or ``false``, nothing else (not ``1``, ``"true"`` or ``"on"``)."""

    default_error_messages = {"invalid": "This must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class TextField(serializers.CharField):
    """A JSON string (not a number)."""

    default_error_messages = {"invalid": "This must be text."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ChoiceField(serializers.ChoiceField):
    """One of the choices, as a string; a refusal lists them."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or data not in self.choice_strings_to_values:
            raise serializers.ValidationError(
                f"{data!r} is not one of {', '.join(map(str, self.choices))}.", code="invalid_choice"
            )
        return self.choice_strings_to_values[data]


class ProjectSettingsSerializer(serializers.ModelSerializer):
    """Every setting of ``PROJECT_SETTINGS``, built from the model's fields (and so from their
    declarations) with the strict fields above."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.PositiveSmallIntegerField: WholeNumberField,
        models.PositiveIntegerField: WholeNumberField,
        models.FloatField: NumberField,
        models.BooleanField: FlagField,
        models.CharField: TextField,
        models.TextField: TextField,
    }
    serializer_choice_field = ChoiceField

    class Meta:
        model = Project
        fields = list(PROJECT_SETTINGS)
        # A credential is taken, never given back (docs/assist.md).
        extra_kwargs = {name: {"write_only": True} for name in SETTINGS.secrets}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = [name for name in data if name not in self.fields]
            if unknown:
                raise serializers.ValidationError({unknown[0]: [setting_refusal(unknown[0])]})
        return super().to_internal_value(data)


class ProjectSettingsApi(APIView):
    """Read or change the project's settings. A PATCH names only the settings it changes; each must
    be within its range (the schema's minimum/maximum and enum, docs/leads.md) and the three splits
    must still add up to 100. Anything refused is a 400 naming the field, and nothing changes."""

    permission_classes = [IsAuthenticated]

    @extend_schema(tags=TAGS, responses={200: ProjectSettingsSerializer, **ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        return Response(ProjectSettingsSerializer(project).data)

    @extend_schema(tags=TAGS, request=ProjectSettingsSerializer, responses={200: ProjectSettingsSerializer, **ERRORS})
    def patch(self, request: Request, slug: str) -> Response:
        project = project_get_for_lead(user=request.user, slug=slug)
        serializer = ProjectSettingsSerializer(project, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        project = project_settings_update(project=project, **serializer.validated_data)
        return Response(ProjectSettingsSerializer(project).data)

"""Each project setting is declared once (``annotation.models.projects.SETTINGS``, kinds in
annotation/models/declarations.py), and everything that states a setting's range, choices, default,
help or group reads that declaration: the model field, the database's check constraint, the lead's
settings form, the API serializer and its OpenAPI schema, and the Django admin. Derived from the
declarations, so a new setting is checked without a test edit."""

from __future__ import annotations

import math

import pytest
from django.contrib import admin
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import IntegrityError, transaction
from django.db.models import Q

from annotation.apis.settings import ProjectSettingsSerializer
from annotation.models import Project
from annotation.models.declarations import Choice, Flag, Line, Number, Prose, Secret, Settings, WholeNumber
from annotation.models.projects import SETTINGS
from annotation.services.projects import NOT_SETTINGS, PROJECT_SETTINGS, PROJECT_SETTINGS_GROUPS
from frontend.views.manage import ProjectSettingsForm
from tests.annotation.settings_cases import EVERY_SETTING, IDS, just_outside, with_splits

RANGED = [setting for setting in EVERY_SETTING if isinstance(setting, WholeNumber | Number)]


@pytest.fixture(scope="module")
def schema():
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


def _limits(validators) -> tuple:
    low = [v.limit_value for v in validators if isinstance(v, MinValueValidator)]
    high = [v.limit_value for v in validators if isinstance(v, MaxValueValidator)]
    return (min(low) if low else None, max(high) if high else None)


def test_every_field_of_a_project_is_a_setting_or_says_why_not():
    fields = {field.name for field in Project._meta.concrete_fields}
    assert set(SETTINGS.names) <= fields
    # the rest: the key, the creation time, and what NOT_SETTINGS explains to a caller
    assert fields - set(SETTINGS.names) == {"id", "created_at", *NOT_SETTINGS}


def test_the_form_the_serializer_the_service_and_the_admin_have_the_declared_settings_and_groups():
    names = set(SETTINGS.names)
    assert (
        set(ProjectSettingsForm().fields) == set(ProjectSettingsSerializer().fields) == set(PROJECT_SETTINGS) == names
    )
    form_groups = [(title, tuple(field.name for field in fields)) for title, fields in ProjectSettingsForm().groups()]
    assert tuple(form_groups) == PROJECT_SETTINGS_GROUPS == SETTINGS.groups()
    # the admin shows the same groups, in order, each with the same settings
    fieldsets = admin.site._registry[Project].get_fieldsets(None)
    shown = [(title, tuple(name for name in options["fields"] if name in names)) for title, options in fieldsets]
    assert [entry for entry in shown if entry[1]] == list(SETTINGS.groups())


@pytest.mark.parametrize("setting", EVERY_SETTING, ids=IDS)
def test_the_model_form_serializer_and_schema_read_the_declaration(setting, schema):
    name = setting.name
    model_field = Project._meta.get_field(name)
    form_field = ProjectSettingsForm().fields[name]
    serializer_field = ProjectSettingsSerializer().fields[name]
    components = ("ProjectSettings", "PatchedProjectSettingsRequest")
    if isinstance(setting, Secret):  # write-only: in what a lead sends, never in what anybody reads
        assert name not in schema["ProjectSettings"]["properties"]
        components = ("PatchedProjectSettingsRequest",)
    documented = [schema[component]["properties"][name] for component in components]
    assert model_field.help_text == form_field.help_text == serializer_field.help_text == setting.help
    assert all(prop["description"].startswith(setting.help) for prop in documented)
    if isinstance(setting, WholeNumber | Number):
        bounds = (setting.low, setting.high)
        assert _limits(model_field.validators) == bounds
        assert (form_field.min_value, form_field.max_value) == bounds
        assert (serializer_field.min_value, serializer_field.max_value) == bounds
        assert all((prop["minimum"], prop["maximum"]) == bounds for prop in documented)
        assert all(prop["type"] == ("integer" if isinstance(setting, WholeNumber) else "number") for prop in documented)
        constraint = next(c for c in Project._meta.constraints if c.name == f"project_{name}_range")
        assert constraint.condition == Q(**{f"{name}__gte": setting.low}) & Q(**{f"{name}__lte": setting.high})
    if isinstance(setting, WholeNumber | Number | Flag | Choice):
        assert model_field.default == setting.default
    if isinstance(setting, Choice):
        assert model_field.choices == setting.choices.choices
        assert [value for value, _ in form_field.choices if value] == setting.choices.values
        assert list(serializer_field.choices) == setting.choices.values
        enum = documented[0]["allOf"][0]["$ref"].rsplit("/", 1)[-1]
        assert schema[enum]["enum"] == setting.choices.values
        constraint = next(c for c in Project._meta.constraints if c.name == f"project_{name}_valid")
        assert constraint.condition == Q(**{f"{name}__in": setting.choices.values})
    if isinstance(setting, Line):
        assert model_field.max_length == form_field.max_length == serializer_field.max_length == setting.max_length
        assert all(prop["maxLength"] == setting.max_length for prop in documented)
    if isinstance(setting, Prose):
        assert model_field.blank and not form_field.required


@pytest.mark.django_db
@pytest.mark.parametrize("setting", RANGED, ids=[setting.name for setting in RANGED])
def test_the_database_refuses_what_the_declaration_refuses(project, setting):
    # given values written past the model's checks (a queryset update), when they are outside
    # the declared range (or not a number at all), then PostgreSQL's check constraint refuses them
    outside = [*just_outside(setting), *([math.nan, math.inf] if isinstance(setting, Number) else [])]
    # (a split comes with the other two keeping the sum at 100, so that a range is what fails; below
    # zero the positive column's own check may be the one PostgreSQL names)
    column = r"split_\w+" if setting.name.startswith("split_") else setting.name
    named = rf"project_{column}_(range|check)"
    for value in outside:
        with pytest.raises(IntegrityError, match=named), transaction.atomic():
            Project.objects.filter(pk=project.pk).update(**with_splits(setting.name, value))
    for value in (setting.low, setting.high):
        with transaction.atomic():
            Project.objects.filter(pk=project.pk).update(**with_splits(setting.name, value))
            transaction.set_rollback(True)


def test_a_model_field_of_the_wrong_kind_is_refused_at_import():
    table = Settings("t", (WholeNumber(name="n", group="g", help="h", default=1, low=0, high=2),))
    with pytest.raises(TypeError, match="n is declared as WholeNumber, not Number"):
        table.number("n")
    with pytest.raises(ValueError, match="declared twice"):
        Settings("t", (*table, *table))

"""Every stage is complete: the registry finds one definition per stage, and each definition
gives everything the engine, the API, the workspace, the progress and the crowd ask of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.template.loader import get_template
from rest_framework.test import APIClient

from annotation.db import compiled
from annotation.models import Stage
from devtools.crowd import crowd_screens_create, crowd_simulate
from pipeline.engine import project_progress, stages
from pipeline.stages.base import StageDefinition
from pipeline.stages.registry import _check_wire
from pipeline.stages.units import Unit
from pipeline.stages.wire import AssignmentPayloadSerializer, stage_name_field
from tests.conftest import login

pytestmark = pytest.mark.django_db


def test_one_definition_per_stage_in_pipeline_order():
    assert list(stages()) == list(Stage.values)
    for name, stage in stages().items():
        assert isinstance(stage, StageDefinition) and stage.name == name
        assert isinstance(stage.unit, Unit) and stage.label


@pytest.mark.parametrize("name", Stage.values)
def test_each_stage_declares_its_page(name):
    stage = stages()[name]
    # the template renders from the declared name, and the page's controller is a static file
    assert get_template(stage.template)
    found = finders.find(f"frontend/workspace/stages/{stage.controller}.js")
    assert found, f"{name}: no controller {stage.controller}.js"
    source = Path(found).read_text()
    assert "export function controller" in source
    # every message the page's script uses is declared by the stage
    for key in set(re.findall(r"\b(?:m|config\.messages)\.(\w+)", source)):
        assert key in stage.messages, f"{name}: the controller uses m.{key}, which the stage does not declare"
    assert set(stage.viewer) == {"labels", "drag_pans", "boxes"}


def test_the_schema_shows_every_stage_body_and_payload(project, lead):
    client = APIClient()
    login(client, lead)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    submit = schema["paths"]["/api/assignments/{assignment_id}/submit/"]["post"]
    body = submit["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    bodies = {ref["$ref"].rsplit("/", 1)[1] for ref in components[body]["anyOf"]}
    nxt = schema["paths"]["/api/projects/{slug}/stages/{stage}/next/"]["post"]["responses"]["200"]
    payload = nxt["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    payloads = components[payload]["discriminator"]["mapping"]
    for name, stage in stages().items():
        assert any(b.startswith(stage.submit_serializer.__name__.removesuffix("Serializer")) for b in bodies), name
        assert stage.payload_serializer.__name__.removesuffix("Serializer") in payloads[name], name


def test_a_stage_payload_must_name_its_stage():
    # a payload whose ``stage`` is free text (or another stage's) would not tell clients which it is
    class Loose(AssignmentPayloadSerializer):
        pass

    class Borrowed(AssignmentPayloadSerializer):
        stage = stage_name_field("answers")

    class Own(AssignmentPayloadSerializer):
        stage = stage_name_field("prefilter")

    stage = stages()["prefilter"]
    for payload in (Loose, Borrowed):
        stage.payload_serializer = payload
        try:
            with pytest.raises(ImproperlyConfigured, match="stage_name_field"):
                _check_wire("prefilter", stage)
        finally:
            del stage.payload_serializer  # back to the class's own
    stage.payload_serializer = Own
    try:
        _check_wire("prefilter", stage)
    finally:
        del stage.payload_serializer


def test_the_crowd_drives_every_stage_and_every_claim_is_compiled(project):
    # given a small project, and the compiled claims forgotten
    # (a shuffled queue's claim is the one from the pivot: the steady queue of the tests starts at 0)
    keys = {name: (name, "from") if stage.unit.shuffled else name for name, stage in stages().items()}
    for key in keys.values():
        compiled.forget(("first", ("claim", key)))
    crowd_screens_create(project=project, count=16, seed=2)
    # when the scripted crowd works it through the services
    summary = crowd_simulate(project=project, annotators=5, seed=2)
    # then every stage got work done, the project is ready, no stage has anything pending
    assert set(summary["submitted"]) == set(stages()), summary["submitted"]
    progress = project_progress(project=project)
    assert progress.ready_for_postprocessing and set(progress.pending) == set(stages())
    # and each stage's claim checked out against the ORM and was cached (its inputs are declared)
    for name, stage in stages().items():
        inputs = {"project": stage.queue_inputs}
        assert compiled.is_cached(("first", ("claim", keys[name])), {"project": project}, inputs), name


def withdrawal_gaps(cls: type[StageDefinition]) -> list[str]:
    """What a stage definition leaves undeclared about quality control's withdrawals: it defines
    ``withdraw`` and ``restore`` itself (or inherits them from a stage that does), or declares
    ``withdraws_nothing`` with the reason."""
    if cls.withdraws_nothing.strip():
        return []
    return [name for name in ("withdraw", "restore") if getattr(cls, name) is getattr(StageDefinition, name)]


@pytest.mark.parametrize("name", Stage.values)
def test_each_stage_says_what_a_stopped_annotator_leaves_behind(name):
    # a pause (and a failed qualification by review) calls the stage's withdraw; a lead's
    # reinstate calls its restore: a stage without them leaves a stopped annotator's work in
    assert withdrawal_gaps(type(stages()[name])) == [], f"{name}: define withdraw/restore or withdraws_nothing"


def test_the_withdrawal_check_catches_a_stage_that_forgets():
    class Forgetful(StageDefinition):  # no ``name``: the registry never sees it
        pass

    class Declared(StageDefinition):
        withdraws_nothing = "its work never reaches the release"

    assert withdrawal_gaps(Forgetful) == ["withdraw", "restore"]
    assert withdrawal_gaps(Declared) == []


def test_debug_is_off_in_tests():
    # the page checks above render with the production template settings
    assert settings.DEBUG is False

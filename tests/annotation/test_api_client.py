"""The tools API clients use: the served schema passes openapi-spec-validator, its unions are ones a
client can tell apart, and its binary answers say what they are.

The validator is in requirements-dev.txt; without it the test skips and says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema.exceptions import ValidationError

CLIENT_CONFIG = Path(__file__).resolve().parents[2] / "docs" / "openapi-python-client.yaml"


def served_schema(client: Any) -> dict[str, Any]:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


# --- the schema --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_served_schema_is_valid_openapi(client):
    validators = pytest.importorskip(
        "openapi_spec_validator", reason="openapi-spec-validator is not installed (requirements-dev.txt)"
    )
    schema = served_schema(client)
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validators.OpenAPIV30SpecValidator(schema).iter_errors()
    ]
    assert errors == []


@pytest.mark.django_db
def test_every_stage_body_is_a_valid_submit_body(client):
    """The submit body is ``anyOf`` the stages' bodies: a questions-1 body is also a questions-2 body,
    so under ``oneOf`` (exactly one) a validating client refused it."""
    validator_module = pytest.importorskip("openapi_schema_validator")
    schema = served_schema(client)
    submit = schema["paths"]["/api/assignments/{assignment_id}/submit/"]["post"]
    body_schema = {**submit["requestBody"]["content"]["application/json"]["schema"], "components": schema["components"]}
    validator = validator_module.OAS30Validator(body_schema)
    bodies = {
        "prefilter": {"non_english_app": False, "vh_out_of_sync": False},
        "questions-1": {"questions": ["What is the title?"]},
        "questions-2": {"questions": [], "flags": [{"question_id": 1, "reason": "vague"}]},
        "answers": {
            "question": "What is it?",
            "verdict": "answered",
            "elements": [{"vh_index": 3}],
            "full_answer": "A.",
        },
        "not-answerable": {"question": "What is the weather?"},
        "review": {"verdict": "accepted"},
    }
    for stage, body in bodies.items():
        try:
            validator.validate(body)
        except ValidationError as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{stage}: {exc.message}")


@pytest.mark.django_db
def test_each_payload_names_its_stage_as_a_one_value_enum(client):
    """A client tells the payloads of ``next`` apart by content: each one's ``stage`` admits only its name."""
    schema = served_schema(client)
    components = schema["components"]["schemas"]
    payload = components["StagePayload"]
    for stage, ref in payload["discriminator"]["mapping"].items():
        stage_schema = components[ref.rsplit("/", 1)[1]]["properties"]["stage"]
        enum_ref = stage_schema.get("$ref") or stage_schema["allOf"][0]["$ref"]
        assert components[enum_ref.rsplit("/", 1)[1]]["enum"] == [stage]


@pytest.mark.django_db
def test_every_answer_with_a_body_states_its_type_binary_ones_as_bytes(client):
    """A 2xx answer without a schema (the export's zip was one) or with a wildcard type (``image/*``) gives a
    generated client ``None``; the binary types are the ones the client configuration reads as bytes."""
    schema = served_schema(client)
    binary, bodiless = set(), []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code, answer in operation["responses"].items():
                content = answer.get("content", {})
                if code.startswith("2") and code != "204" and not all("schema" in m for m in content.values()):
                    bodiless.append(f"{method} {path} {code}")
                binary |= {(path, media) for media, m in content.items() if m["schema"].get("format") == "binary"}
    assert bodiless == []
    screen = "/api/projects/{slug}/screens/{rico_id}"
    assert binary == {
        (f"{screen}/image/", "image/png"),
        (f"{screen}/image/", "image/jpeg"),
        (f"{screen}/overlay/", "image/jpeg"),
        ("/api/release-jobs/{job_id}/download/", "application/zip"),
    }
    credentials = schema["paths"]["/api/member-jobs/{job_id}/credentials/"]["post"]["responses"]["200"]
    assert credentials["content"] == {"text/csv": {"schema": {"type": "string"}}}  # text: a client reads a str
    overrides = yaml.safe_load(CLIENT_CONFIG.read_text())["content_type_overrides"]
    assert {media for _, media in binary} == {m for m, as_ in overrides.items() if as_ == "application/octet-stream"}

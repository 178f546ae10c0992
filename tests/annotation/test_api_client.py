"""The tools API clients use: the served schema passes openapi-spec-validator.

The validator is in requirements-dev.txt; without it the test skips and says why."""

from __future__ import annotations

from typing import Any

import pytest


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

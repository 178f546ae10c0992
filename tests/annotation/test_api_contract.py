"""The API keeps to its schema: schemathesis generates requests from the served OpenAPI document
(``/api/schema/``) and sends them, as an annotator and as a lead (token authentication), through
Django's real WSGI application (every middleware, PostgreSQL, commits: ``transactional_db``).

Every answer must be no server error (5xx), a status the operation documents, the documented
content type, and a body that matches the documented schema; a request that breaks the schema
must be refused with a 4xx (``negative_data_rejection``). Path parameters name real objects of
one project (so requests reach the views, not only the 404s of unknown ids); bodies and query
parameters are generated. Bounded: ``MAX_EXAMPLES`` examples per operation (about 40 operations,
two actors).
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.models import ImportJob, ReleaseJob
from pipeline.engine import assignment_next
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.pipeline.quality.report_builders import gold
from tests.pipeline.stages.helpers import screens

MAX_EXAMPLES = 15
# Ids far above what the test's own sequences reach, so that one ``job_id`` names both an import
# and a release job (the two tables are numbered apart).
JOB_ID = 900_001


def not_a_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """No 5xx, whatever the input (schemathesis's own check, with the body in the message)."""
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text}"
    return None


def invalid_input_is_refused(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis's ``negative_data_rejection`` (a request that breaks the schema gets a 4xx, not
    a 2xx), except when only the path is broken: the path parameters are pinned to the world's
    objects (an ``enum`` of one), so their negation may name another real object (a job the run
    itself started) and rightly succeed. Unknown path values are still sent and must not be a
    5xx or undocumented (the other checks)."""
    meta = case.meta
    if meta is not None:
        broken = {location for location, info in meta.components.items() if info.mode.is_negative}
        if broken == {ParameterLocation.PATH}:
            return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    invalid_input_is_refused,  # runs only on negative cases
]


@pytest.fixture
def contract_world(transactional_db: Any, settings: Any) -> dict[str, Any]:
    """One project with a lead and an annotator (tokens), screens, an open lease, a gold item and
    jobs: the objects the path parameters name."""
    settings.ALLOWED_HOSTS = ["*"]  # the WSGI client's host name
    project = ProjectFactory(slug="c", name="Contract")
    lead, annotator = UserFactory(username="lena"), UserFactory(username="anna")
    MembershipFactory(project=project, user=lead, role="lead", in_answer_pool=True)
    MembershipFactory(project=project, user=annotator, in_answer_pool=True)
    made = screens(project, 3)
    lease = assignment_next(project=project, user=annotator, stage="prefilter")
    assert lease is not None
    item = gold(project)
    ImportJob.objects.create(pk=JOB_ID, project=project, source="imports/missing.zip", source_kind="zip")
    ReleaseJob.objects.create(pk=JOB_ID, project=project, kind="export", format="screenqa", status="failed")
    return {
        "tokens": {"lead": Token.objects.create(user=lead).key, "annotator": Token.objects.create(user=annotator).key},
        "parameters": {
            "slug": project.slug,
            "rico_id": made[0].rico_id,
            "stage": "prefilter",
            "package": made[0].app.package,
            "assignment_id": lease.pk,
            "user_id": annotator.pk,
            "gold_id": item.pk,
            "job_id": JOB_ID,
        },
    }


@pytest.fixture
def api_schema(contract_world: dict[str, Any], client: Any) -> Any:
    """The schema the app serves, its path parameters pinned to the world's objects, sent through
    ``annotation.wsgi.application``."""
    from annotation.wsgi import application

    served = client.get("/api/schema/?format=json")
    assert served.status_code == 200
    document = served.json()
    pinned = contract_world["parameters"]
    for operations in document["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] in pinned:
                    parameter["schema"] = {**parameter["schema"], "enum": [pinned[parameter["name"]]]}
    schema = schemathesis.openapi.from_dict(document)
    schema.app = application
    return schema


BOUNDED = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: the first failing answer is reported as is
)


def contract_run(
    schema: Any, token: str, mode: GenerationMode = GenerationMode.POSITIVE
) -> tuple[list[str], dict[str, set[int]]]:
    """Every operation of ``schema``, ``MAX_EXAMPLES`` generated requests each, sent with ``token``:
    the failures (one per operation) and the statuses each operation answered. (schemathesis's
    Python API: its pytest plugin does not run on this pytest.)"""
    failures: list[str] = []
    statuses: dict[str, set[int]] = {}
    for result in schema.get_all_operations():
        operation = result.ok()

        @BOUNDED
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            response = case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
            statuses.setdefault(operation.label, set()).add(response.status_code)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # collected: one report for every operation
            failures.append(f"{operation.label}: {str(exc).strip()[:1500]}")
    return failures, statuses


@pytest.mark.parametrize("actor", ["annotator", "lead"])
def test_the_api_keeps_to_its_schema(api_schema: Any, contract_world: dict[str, Any], actor: str) -> None:
    failures, statuses = contract_run(api_schema, contract_world["tokens"][actor])
    assert not failures, "\n\n".join(failures)
    # the pinned path parameters reach the views: every operation answered, most of them with success
    answered = {label for label, codes in statuses.items() if any(200 <= code < 300 for code in codes)}
    assert len(statuses) >= 40 and len(answered) >= {"annotator": 10, "lead": 25}[actor], sorted(answered)
    print(f"{actor}: {len(statuses)} operations, {len(answered)} answered 2xx")


def test_input_outside_the_schema_is_refused_cleanly(api_schema: Any, contract_world: dict[str, Any]) -> None:
    """Bodies and query parameters that break the schema (wrong types, missing fields, values out of
    range, unknown or blank choices): refused (a 4xx, schemathesis's ``negative_data_rejection``),
    never a 5xx, and every answer documented (a 400 has the error body). As the lead, who reaches
    every view. The query parameters are strict in one place (``annotation.apis.params``)."""
    failures, statuses = contract_run(api_schema, contract_world["tokens"]["lead"], GenerationMode.NEGATIVE)
    assert not failures, "\n\n".join(failures)
    assert any(400 in codes for codes in statuses.values())

"""The tools API clients use: the served schema passes openapi-spec-validator, its unions are ones a
client can tell apart and its binary answers say what they are; and a client generated from it by
openapi-python-client (with docs/openapi-python-client.yaml) drives the real API on a live server: an
annotator's loop on two stages with typed payloads, both import bodies, the screenshot's bytes, and a
lead's export from start to the zip's bytes.

Both tools are in requirements-dev.txt; without them the tests skip and say why."""

from __future__ import annotations

import importlib
import io
import json
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from jsonschema.exceptions import ValidationError
from PIL import Image
from rest_framework.authtoken.models import Token

from tests.factories import png_bytes
from tests.pipeline.ingest.test_jobs import synthetic_vh, synthetic_zip
from tests.pipeline.stages.helpers import member, screens

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


# --- a generated client on a live server ---------------------------------------------------------


@pytest.fixture
def generated_client(client, tmp_path) -> Any:
    """The package openapi-python-client generates from the served schema, imported."""
    tool = shutil.which("openapi-python-client") or str(Path(sys.executable).with_name("openapi-python-client"))
    if not Path(tool).exists():
        pytest.skip("openapi-python-client is not installed (requirements-dev.txt installs it)")
    (tmp_path / "schema.json").write_text(json.dumps(served_schema(client)))
    # the configuration clients are told to use, without the generator's formatting hooks (ruff)
    config = {**yaml.safe_load(CLIENT_CONFIG.read_text()), "post_hooks": []}
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = tmp_path / "client"
    command = [tool, "generate", "--path", "schema.json", "--config", "config.json", "--output-path", str(out)]
    run = subprocess.run(
        [*command, "--overwrite", "--fail-on-warning"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # --fail-on-warning: every operation and answer was understood (an unknown body type is a warning)
    assert run.returncode == 0, run.stdout + run.stderr
    (package,) = [p.name for p in out.iterdir() if (p / "__init__.py").exists()]
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(package)
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


def api(package: Any, module: str) -> Any:
    return importlib.import_module(f"{package.__name__}.api.{module}")


def models(package: Any) -> Any:
    return importlib.import_module(f"{package.__name__}.models")


@pytest.mark.django_db(transaction=True)
def test_a_generated_client_works_on_two_stages_imports_and_exports(generated_client, live_server, project, lead):
    pkg, m = generated_client, models(generated_client)
    annotator = member(project, "anna")
    project.prefilter_judgments = 1
    project.save()
    (screen,) = screens(project, 1)

    def client_of(user: Any) -> Any:
        token = Token.objects.create(user=user).key
        return pkg.AuthenticatedClient(
            base_url=live_server.url, token=token, prefix="Token", raise_on_unexpected_status=True
        )

    anna, leo = client_of(annotator), client_of(lead)
    next_ = api(pkg, "engine.projects_stages_next_create")
    submit = api(pkg, "engine.assignments_submit_create")

    # the annotator's loop on pre-filtering: a typed payload, a typed body
    work = next_.sync(slug=project.slug, stage="prefilter", client=anna)
    assert isinstance(work, m.PrefilterPayload), type(work)
    assert work.screen.rico_id == screen.rico_id and work.additional_properties == {}
    image = api(pkg, "screens.screen_image").sync(slug=project.slug, rico_id=work.screen.rico_id, client=anna)
    assert Image.open(io.BytesIO(image.payload.read())).size == (108, 192)  # the screenshot's bytes
    done = submit.sync(
        assignment_id=work.id,
        client=anna,
        body=m.PrefilterSubmitRequest(non_english_app=False, vh_out_of_sync=False),
    )
    assert done.status == "submitted"

    # ... and on questions, pass 1 (the screen it passed): the stage's own field is typed, not an
    # additional property
    work = next_.sync(slug=project.slug, stage="questions-1", client=anna)
    assert isinstance(work, m.QuestionsPass1Payload), type(work)
    assert work.screen.rico_id == screen.rico_id
    assert isinstance(work.max_questions, int) and work.max_questions == project.questions_pass1_cap
    assert "max_questions" not in work.additional_properties
    done = submit.sync(assignment_id=work.id, client=anna, body=m.QuestionsSubmitRequest(questions=["What is it?"]))
    assert done.status == "submitted" and done.submission["questions"] == ["What is it?"]

    # the lead imports with either body: a zip upload (multipart) and a folder of the import area (JSON)
    start_import = api(pkg, "imports.import_create")
    upload = pkg.types.File(
        payload=io.BytesIO(synthetic_zip(["71"])), file_name="batch.zip", mime_type="application/zip"
    )
    job = start_import.sync(slug=project.slug, client=leo, body=m.ImportUploadRequest(file=upload))
    assert isinstance(job, m.JobOutput) and job.source_kind == "zip"
    default_storage.save(f"staging/{project.slug}/batch-1/72.png", ContentFile(png_bytes(144, 256)))
    default_storage.save(f"staging/{project.slug}/batch-1/72.json", ContentFile(json.dumps(synthetic_vh("x"))))
    job = start_import.sync(slug=project.slug, client=leo, body=m.ImportPrefixRequest(prefix="batch-1"))
    assert isinstance(job, m.JobOutput) and job.source_kind == "prefix"

    # the lead's export: start it, follow the job, download the zip's bytes
    job = api(pkg, "projects.projects_exports_create").sync(
        slug=project.slug, client=leo, body=m.ExportStartInputRequest(format_=m.FormatEnum("jsonl"))
    )
    follow = api(pkg, "release.release_job_retrieve")
    deadline = time.monotonic() + 60
    while job.status in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.2)
        job = follow.sync(job_id=job.id, client=leo)
    assert job.status == "done", job.error
    zipped = api(pkg, "release_jobs.release_jobs_download_retrieve").sync(job_id=job.id, client=leo)
    archive = zipfile.ZipFile(io.BytesIO(zipped.payload.read()))
    assert json.loads(archive.read("manifest.json"))["format"] == "jsonl"

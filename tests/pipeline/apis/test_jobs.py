"""Job API: one shape for every kind, status and re-run endpoints for both tables, and who may use them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from tests.conftest import login
from tests.factories import PAGE_JOB_KINDS as JOB_KINDS
from tests.factories import UserFactory, job_of_kind

pytestmark = pytest.mark.django_db

COMMON = {
    "id",
    "kind",
    "url",
    "status_url",
    "rerun_url",
    "project",
    "created_by",
    "status",
    "stale",
    "processed",
    "total",
    "result",
    "error",
    "attempts",
    "heartbeat_at",
    "created_at",
    "updated_at",
    "finished_at",
}
IMPORT_ONLY = {"source_kind", "source", "device_width", "device_height", "summary"}
RELEASE_ONLY = {"format", "download_url"}
MEMBERS_ONLY = {"downloaded_at", "credentials_url"}
TABLE_ONLY = {"import": IMPORT_ONLY, "members": MEMBERS_ONLY}


def base(kind: str) -> str:
    return {"import": "/api/imports", "members": "/api/member-jobs"}.get(kind, "/api/release-jobs")


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_every_kind_has_one_shape_with_its_tables_fields(kind, project, lead, api_client):
    job = job_of_kind(kind=kind, project=project, created_by=lead, status="done", result={"n": 1})
    login(api_client, lead)
    body = api_client.get(f"{base(kind)}/{job.pk}/").json()
    assert set(body) == COMMON | TABLE_ONLY.get(kind, RELEASE_ONLY)
    assert (body["kind"], body["project"], body["created_by"], body["status"], body["stale"]) == (
        kind,
        "demo",
        "leo",
        "done",
        False,
    )
    assert body["url"] == body["status_url"] == f"{base(kind)}/{job.pk}/"
    assert body["rerun_url"] == f"{base(kind)}/{job.pk}/retry/"
    assert body["result"] == {"n": 1}
    if kind == "import":
        assert body["summary"] == {"n": 1}


def test_download_url_names_an_export_artifact_once_there_is_one(project, lead, api_client):
    job = job_of_kind(kind="export", project=project, status="done")
    login(api_client, lead)
    body = api_client.get(f"/api/release-jobs/{job.pk}/").json()
    assert (body["download_url"], body["created_by"]) == (None, None)
    job.artifact.save("release.zip", ContentFile(b"zip"))
    assert api_client.get(f"/api/release-jobs/{job.pk}/").json()["download_url"] == (
        f"/api/release-jobs/{job.pk}/download/"
    )


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_a_job_without_a_heartbeat_is_reported_stale_and_re_run(
    kind, project, lead, api_client, settings, django_capture_on_commit_callbacks
):
    settings.SCREENQA_JOB_STALE_SECONDS = 90
    old = timezone.now() - timedelta(seconds=91)
    job = job_of_kind(kind=kind, project=project, status="running", attempts=1, heartbeat_at=old)
    login(api_client, lead)
    assert api_client.get(f"{base(kind)}/{job.pk}/").json()["stale"] is True
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api_client.post(f"{base(kind)}/{job.pk}/retry/")
    assert response.status_code == 202
    assert (response.json()["status"], response.json()["stale"]) == ("queued", False)
    assert len(callbacks) == 1  # the run is queued on commit


@pytest.mark.parametrize("kind", JOB_KINDS)
@pytest.mark.parametrize("status", ["done", "running"])
def test_re_run_of_a_done_or_live_job_is_a_409(kind, status, project, lead, api_client):
    job = job_of_kind(kind=kind, project=project, status=status)
    login(api_client, lead)
    response = api_client.post(f"{base(kind)}/{job.pk}/retry/")
    assert response.status_code == 409
    assert response.json()["status"] == status
    assert "detail" in response.json()


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_status_and_re_run_are_for_leads_and_site_admins(kind, project, lead, annotator, outsider, api_client):
    job = job_of_kind(kind=kind, project=project, status="failed")
    admin = UserFactory(username="root", is_superuser=True)
    for user, read, rerun in [(None, 403, 403), (annotator, 403, 403), (outsider, 404, 404)]:
        api_client.logout()
        if user:
            login(api_client, user)
        assert api_client.get(f"{base(kind)}/{job.pk}/").status_code == read, user
        assert api_client.post(f"{base(kind)}/{job.pk}/retry/").status_code == rerun, user
    job.refresh_from_db()
    assert job.status == "failed"
    for user in (lead, admin):
        login(api_client, user)
        assert api_client.get(f"{base(kind)}/{job.pk}/").status_code == 200
    assert api_client.get(f"{base(kind)}/999999/").status_code == 404


def test_the_schema_documents_one_job_shape_and_both_re_run_endpoints(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operation in [
        ("/api/imports/{job_id}/retry/", "import_retry"),
        ("/api/release-jobs/{job_id}/retry/", "release_job_retry"),
    ]:
        post = schema["paths"][path]["post"]
        assert post["operationId"] == operation
        assert (
            post["responses"]["202"]["content"]["application/json"]["schema"]["$ref"]
            == "#/components/schemas/JobOutput"
        )
        assert set(post["responses"]) == {"202", "403", "404", "409", "429"}
    for path in ("/api/imports/{job_id}/", "/api/release-jobs/{job_id}/", "/api/projects/{slug}/postprocess/"):
        responses = next(iter(schema["paths"][path].values()))["responses"]
        ok = responses.get("200") or responses["202"]
        assert ok["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/JobOutput"
    job = schema["components"]["schemas"]["JobOutput"]
    # fields of one table only are optional
    assert not (IMPORT_ONLY | RELEASE_ONLY) & set(job["required"])
    assert set(job["properties"]) >= COMMON and set(job["required"]) >= COMMON

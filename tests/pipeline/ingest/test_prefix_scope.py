"""Storage-prefix imports are scoped to the project's own import area (issue 12 §3):
``staging/<slug>/``. ``..``, absolute paths and other projects' folders are refused, and
nothing outside the area is listed or reported; on local files and on S3 (moto's server)."""

from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation.exceptions import ApplicationError
from annotation.models import ImportJob, Screen
from pipeline.ingest.jobs import import_job_create, project_import_area
from pipeline.jobs.lifecycle import job_create
from tests.factories import MembershipFactory, ProjectFactory, UserFactory, png_bytes
from tests.pipeline.ingest.test_jobs import synthetic_vh

pytestmark = pytest.mark.django_db


def _stage(folder: str, ids: list[str], *, broken: tuple[str, ...] = ()) -> None:
    for rico_id in ids:
        default_storage.save(f"{folder}/{rico_id}.png", ContentFile(png_bytes(144, 256)))
        vh = b"{not json" if rico_id in broken else json.dumps(synthetic_vh(f"Screen {rico_id}")).encode()
        default_storage.save(f"{folder}/{rico_id}.json", ContentFile(vh))


@pytest.fixture
def two_projects(project, lead):
    other = ProjectFactory(slug="other")
    other_lead = UserFactory(username="olga")
    MembershipFactory(project=other, user=other_lead, role="lead")
    # the other project's staged screens (one broken: its id would show in a rejection list)
    _stage("staging/other/batch", ["9001", "9002"], broken=("9002",))
    # and files outside every import area
    _stage("imports/loose", ["7001"])
    return other


def _scoped_import_checks(project, lead, django_capture_on_commit_callbacks) -> None:
    assert project_import_area(project=project) == "staging/demo"
    _stage("staging/demo/batch-1", ["1", "2"], broken=("2",))
    _stage("staging/demo/batch-10", ["10"])  # a sibling whose name starts the same
    # refused: escapes, absolute paths, other projects' folders, folders outside the area
    for prefix in [
        "../other/batch",
        "batch-1/../../other/batch",
        "/staging/other/batch",
        "/etc",
        "C:/x",
        "s3://bucket/staging/other/batch",
        "./batch-1",
        "batch\\1",
        "staging/other/batch",
        "imports/loose",
        "..",
    ]:
        with pytest.raises(ApplicationError) as err:
            import_job_create(project=project, user=lead, prefix=prefix)
        assert err.value.field == "prefix", prefix
        assert "9001" not in err.value.message and "9002" not in err.value.message
    assert not ImportJob.objects.exists()
    # accepted: a folder of the area, named relative to it or with the area's path in front
    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_create(project=project, user=lead, prefix="batch-1")
    job.refresh_from_db()
    assert job.source == "staging/demo/batch-1"
    assert job.status == ImportJob.Status.DONE, job.error
    assert job.summary["imported"] == 1
    reported = json.dumps(job.summary)
    assert "9001" not in reported and "9002" not in reported and "7001" not in reported and '"10"' not in reported
    assert set(Screen.objects.values_list("rico_id", flat=True)) == {"1"}
    with django_capture_on_commit_callbacks(execute=True):
        whole = import_job_create(project=project, user=lead, prefix="staging/demo/")
    whole.refresh_from_db()
    assert whole.source == "staging/demo" and whole.status == ImportJob.Status.DONE, whole.error
    assert set(Screen.objects.values_list("rico_id", flat=True)) == {"1", "10"}
    assert not Screen.objects.filter(rico_id__in=["9001", "7001"]).exists()


def test_prefix_import_is_scoped_on_local_files(two_projects, project, lead, django_capture_on_commit_callbacks):
    _scoped_import_checks(project, lead, django_capture_on_commit_callbacks)


def test_prefix_import_is_scoped_on_s3(s3_storage, project, lead, django_capture_on_commit_callbacks):
    # given the default storage on an S3-compatible server (moto), with another project's staging
    ProjectFactory(slug="other")
    _stage("staging/other/batch", ["9001", "9002"], broken=("9002",))
    _stage("imports/loose", ["7001"])
    assert default_storage.exists("staging/other/batch/9001.png")
    assert type(default_storage._wrapped).__name__ == "S3Storage"
    _scoped_import_checks(project, lead, django_capture_on_commit_callbacks)


def test_a_job_recorded_outside_the_area_is_refused_by_the_worker(
    project, lead, two_projects, django_capture_on_commit_callbacks
):
    # given a job recorded before imports were scoped, naming another project's folder
    with pytest.raises(ApplicationError), django_capture_on_commit_callbacks(execute=True):
        job = job_create(
            model=ImportJob, project=project, user=lead, source="staging/other/batch", source_kind="prefix"
        )
    job = ImportJob.objects.get()
    # then it fails with the reason, and imported nothing
    assert job.status == ImportJob.Status.FAILED
    assert "outside this project's import area staging/demo/" in job.error
    assert "9001" not in job.error and not Screen.objects.exists()


def test_the_api_refuses_another_projects_folder(client, project, lead, two_projects):
    from tests.conftest import login

    login(client, lead)
    response = client.post(
        f"/api/projects/{project.slug}/imports/", {"prefix": "../other/batch"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == "prefix" and "staging/demo/" in response.json()["detail"]

"""Export API: leads start an export job (202), the task stores a zip, leads download it."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from annotation.models import ReleaseJob
from pipeline.jobs.runner import job_run
from tests.conftest import login
from tests.factories import ScreenFactory, kept_question

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(project):
    screen = ScreenFactory(project=project, rico_id="31", split="validation")
    kept_question(
        screen=screen,
        text="From whom are you protected?",
        position=0,
        answers=[("From fraud.", [{"left": 1, "top": 1, "right": 9, "bottom": 9, "text": "fraud"}])],
        short_answers=["fraud"],
    )
    return project


def start(client, slug, body, capture):
    with capture(execute=True):
        return client.post(reverse("api-export-list", kwargs={"slug": slug}), body, format="json")


def test_lead_starts_an_export_and_downloads_the_zip(data, lead, api_client, django_capture_on_commit_callbacks):
    login(api_client, lead)
    # When a lead starts an export
    response = start(api_client, data.slug, {"format": "screenqa"}, django_capture_on_commit_callbacks)
    # Then it is accepted, and the task (run after commit) finishes the job with a zip artifact
    assert response.status_code == 202
    assert response.data["status"] == "queued"
    assert response.data["status_url"] == f"/api/release-jobs/{response.data['id']}/"
    job = ReleaseJob.objects.get(pk=response.data["id"])
    assert (job.kind, job.format, job.status, job.created_by) == ("export", "screenqa", "done", lead)
    assert (job.processed, job.total) == (1, 1)
    assert job.result["counts"]["validation"]["questions"] == 1
    # And the lead downloads it: the manifest and the six data files
    download = api_client.get(reverse("api-release-job-download", kwargs={"job_id": job.pk}))
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert sorted(archive.namelist()) == sorted(
        ["manifest.json"]
        + [f"{k}/{s}.json" for k in ("answers_and_bboxes", "short_answers") for s in ("train", "validation", "test")]
    )
    rows = json.loads(archive.read("short_answers/validation.json"))
    assert rows == [{"image_id": 31, "question": "From whom are you protected?", "ground_truth": ["fraud"]}]
    # And the list shows it with its download link
    listed = api_client.get(reverse("api-export-list", kwargs={"slug": data.slug})).data
    assert listed[0]["id"] == job.pk and listed[0]["download_url"].endswith("/download/")


def test_the_same_data_gives_the_same_zip_bytes(data, lead, api_client, django_capture_on_commit_callbacks):
    login(api_client, lead)
    ids = [
        start(api_client, data.slug, {"format": "jsonl"}, django_capture_on_commit_callbacks).data["id"]
        for _ in range(2)
    ]
    first, second = (ReleaseJob.objects.get(pk=pk).artifact.read() for pk in ids)
    assert first == second


def test_the_image_folder_export_ships_the_screenshots(data, lead, api_client, django_capture_on_commit_callbacks):
    login(api_client, lead)
    # the API lists the format (the schema's enum) ...
    schema = api_client.get("/api/schema/?format=json").json()
    assert "imagefolder" in schema["components"]["schemas"]["FormatEnum"]["enum"]
    # ... and an export in it holds the split's metadata and the screenshot it names
    job = start(api_client, data.slug, {"format": "imagefolder"}, django_capture_on_commit_callbacks).data
    download = api_client.get(reverse("api-release-job-download", kwargs={"job_id": job["id"]}))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert sorted(archive.namelist()) == ["manifest.json", "validation/images/31.png", "validation/metadata.jsonl"]
    (row,) = [json.loads(line) for line in archive.read("validation/metadata.jsonl").splitlines()]
    assert row["file_name"] == "images/31.png" and row["screen_id"] == "31"
    assert archive.read("validation/images/31.png") == ReleaseJob.objects.get().project.screens.get().image.read()


def test_unknown_format_is_a_400_and_starts_nothing(data, lead, api_client, django_capture_on_commit_callbacks):
    login(api_client, lead)
    response = start(api_client, data.slug, {"format": "csv"}, django_capture_on_commit_callbacks)
    assert response.status_code == 400
    assert "format" in response.data
    assert not ReleaseJob.objects.exists()


def test_annotators_get_403_outsiders_404_anonymous_403(
    data, annotator, outsider, api_client, django_capture_on_commit_callbacks
):
    url = reverse("api-export-list", kwargs={"slug": data.slug})
    assert api_client.post(url, {"format": "screenqa"}, format="json").status_code == 403
    login(api_client, annotator)
    assert api_client.post(url, {"format": "screenqa"}, format="json").status_code == 403
    assert api_client.get(url).status_code == 403
    api_client.logout()
    login(api_client, outsider)
    assert api_client.post(url, {"format": "screenqa"}, format="json").status_code == 404
    assert not ReleaseJob.objects.exists()


def test_download_is_for_leads_of_the_project_once_done(
    data, lead, annotator, outsider, api_client, django_capture_on_commit_callbacks
):
    login(api_client, lead)
    job_id = start(api_client, data.slug, {}, django_capture_on_commit_callbacks).data["id"]
    url = reverse("api-release-job-download", kwargs={"job_id": job_id})
    api_client.logout()
    login(api_client, annotator)
    assert api_client.get(url).status_code == 403
    api_client.logout()
    login(api_client, outsider)
    assert api_client.get(url).status_code == 404
    # A job that has not finished cannot be downloaded yet
    api_client.logout()
    login(api_client, lead)
    queued = ReleaseJob.objects.create(project=data, kind="export", format="screenqa")
    response = api_client.get(reverse("api-release-job-download", kwargs={"job_id": queued.pk}))
    assert response.status_code == 409
    assert response.data["status"] == "queued"
    # Other kinds of release job are not exports
    other = ReleaseJob.objects.create(project=data, kind="postprocess", status="done")
    assert api_client.get(reverse("api-release-job-download", kwargs={"job_id": other.pk})).status_code == 404


def test_a_failing_export_is_recorded_and_a_failed_job_is_not_rerun_by_a_delivery(data):
    # Given a job whose format no writer knows (e.g. written by an older version)
    job = ReleaseJob.objects.create(project=data, kind="export", format="parquet")
    # When it runs, the failure is recorded on the job and raised
    with pytest.raises(Exception, match="Unknown export format"):
        job_run(kind="export", job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert "Unknown export format" in job.error
    assert not job.artifact
    # And a failed job is left alone when its task is delivered again (a lead's re-run runs it)
    assert job_run(kind="export", job_id=job.pk).status == "failed"


def test_status_url_serves_the_export_job(data, lead, api_client, django_capture_on_commit_callbacks):
    login(api_client, lead)
    started = start(api_client, data.slug, {"format": "docvqa"}, django_capture_on_commit_callbacks).data
    status = api_client.get(started["status_url"])
    assert status.status_code == 200
    assert status.data["id"] == started["id"]
    assert status.data["status"] == "done"

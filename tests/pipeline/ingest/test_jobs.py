"""Web imports: the job service, the task (eager and on a real Celery worker), the API and its permissions."""

from __future__ import annotations

import io
import json
import time
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation.exceptions import ApplicationError
from annotation.models import Candidate, ImportJob, Screen
from pipeline.ingest import import_screens
from pipeline.ingest.jobs import device_size_parse, import_job_create
from pipeline.jobs.lifecycle import job_rerun
from pipeline.jobs.runner import job_run
from tests.conftest import login
from tests.factories import MembershipFactory, ProjectFactory, UserFactory, png_bytes

REAL_IDS = ["3360", "33600", "33627", "33651", "33657", "33686"]


def synthetic_vh(text: str) -> dict:
    leaf = {
        "class": "android.widget.TextView",
        "ancestors": ["android.widget.TextView", "android.view.View", "java.lang.Object"],
        "bounds": [100, 200, 900, 400],
        "visible-to-user": True,
        "visibility": "visible",
        "text": text,
        "content-desc": [None],
    }
    root = {
        "class": "android.widget.FrameLayout",
        "ancestors": ["android.view.ViewGroup", "android.view.View", "java.lang.Object"],
        "bounds": [0, 0, 1440, 2560],
        "visible-to-user": True,
        "visibility": "visible",
        "children": [leaf],
    }
    return {"activity_name": "com.example.shop/.Main", "activity": {"root": root}}


def synthetic_zip(ids: list[str], *, broken: list[str] = ()) -> bytes:
    """A zip of RICO-format pairs drawn here (144x256 screenshots of a 1440x2560 device)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for rico_id in ids:
            zf.writestr(f"{rico_id}.png", png_bytes(144, 256))
            zf.writestr(f"{rico_id}.json", json.dumps(synthetic_vh(f"Screen {rico_id}")))
        for rico_id in broken:
            zf.writestr(f"{rico_id}.png", b"not an image at all")
            zf.writestr(f"{rico_id}.json", json.dumps(synthetic_vh("broken")))
    return buf.getvalue()


def real_zip(folder: Path, ids: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for rico_id in ids:
            zf.write(folder / f"{rico_id}.jpg", f"{rico_id}.jpg")
            zf.write(folder / f"{rico_id}.json", f"{rico_id}.json")
    return buf.getvalue()


def upload(data: bytes, name: str = "batch.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/zip")


def stored_imports() -> list[str]:
    try:
        return default_storage.listdir("imports")[1]
    except FileNotFoundError:
        return []


class TestDeviceSizeParse:
    @pytest.mark.parametrize(("value", "expected"), [("1440x2560", (1440, 2560)), (" 1080 X 1920 ", (1080, 1920))])
    def test_valid(self, value, expected):
        assert device_size_parse(value=value) == expected

    @pytest.mark.parametrize("value", [None, "", "  "])
    def test_empty_means_the_projects(self, value):
        assert device_size_parse(value=value) is None

    @pytest.mark.parametrize("value", ["1440", "1440x", "x2560", "-1x5", "1440*2560", "0x0"])
    def test_invalid(self, value):
        with pytest.raises(ApplicationError) as err:
            device_size_parse(value=value)
        assert err.value.field == "device_size"


@pytest.mark.django_db
class TestImportJobCreate:
    def test_upload_is_stored_and_the_job_queued_on_commit(self, project, lead, django_capture_on_commit_callbacks):
        # given a lead's zip upload
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            job = import_job_create(project=project, user=lead, upload=upload(synthetic_zip(["1", "2"])))
        # then the zip is in storage under imports/<uuid>.zip, the job is queued, the task waits for commit
        assert job.status == ImportJob.Status.QUEUED
        assert job.source_kind == "zip"
        assert job.source.startswith("imports/") and job.source.endswith(".zip")
        assert len(Path(job.source).stem) == 36  # a uuid
        assert default_storage.exists(job.source)
        assert job.created_by == lead
        assert len(callbacks) == 1
        assert Screen.objects.count() == 0

    def test_on_commit_the_task_runs_the_import(self, project, lead, django_capture_on_commit_callbacks):
        # given a zip with two good pairs and a broken one
        with django_capture_on_commit_callbacks(execute=True):
            job = import_job_create(
                project=project,
                user=lead,
                upload=upload(synthetic_zip(["1", "2"], broken=["3"])),
                device_size="1440x2560",
            )
        # then (tasks are eager in tests) the job is done with the importer's summary
        job.refresh_from_db()
        assert job.status == ImportJob.Status.DONE, job.error
        assert (job.device_width, job.device_height) == (1440, 2560)
        assert job.summary["imported"] == 2
        assert job.summary["already_present"] == 0
        assert [r["name"] for r in job.summary["rejected"]] == ["3"]
        assert job.summary["rejected"][0]["reason"]
        assert (job.processed, job.total) == (3, 3)
        assert job.finished_at is not None
        assert set(Screen.objects.values_list("rico_id", flat=True)) == {"1", "2"}
        assert Candidate.objects.filter(screen__rico_id="1", text="Screen 1").exists()

    def test_prefix_import(self, project, lead, django_capture_on_commit_callbacks):
        # given pairs stored under a storage prefix
        for rico_id in ["7", "8"]:
            default_storage.save(f"staging/demo/batch1/{rico_id}.png", ContentFile(png_bytes(144, 256)))
            default_storage.save(f"staging/demo/batch1/{rico_id}.json", ContentFile(json.dumps(synthetic_vh("x"))))
        # when a lead imports the prefix (relative to the project's import area)
        with django_capture_on_commit_callbacks(execute=True):
            job = import_job_create(project=project, user=lead, prefix=" batch1/")
        # then the prefix is recorded (inside the area) and the screens are imported
        job.refresh_from_db()
        assert (job.source_kind, job.source) == ("prefix", "staging/demo/batch1")
        assert job.status == ImportJob.Status.DONE, job.error
        assert job.summary["imported"] == 2

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({}, "file"),
            ({"prefix": "  "}, "file"),
            ({"upload": upload(synthetic_zip(["1"])), "prefix": "incoming"}, "file"),
            ({"upload": upload(b"%PDF-1.4 not a zip", "x.zip")}, "file"),
            ({"upload": upload(synthetic_zip(["1"])), "device_size": "big"}, "device_size"),
            ({"prefix": "../etc"}, "prefix"),
            ({"prefix": "nothing/here"}, "prefix"),
        ],
    )
    def test_bad_input_is_refused_and_leaves_nothing(self, project, lead, kwargs, field):
        with pytest.raises(ApplicationError) as err:
            import_job_create(project=project, user=lead, **kwargs)
        assert err.value.field == field
        assert ImportJob.objects.count() == 0
        assert stored_imports() == []

    def test_upload_over_the_size_cap_is_refused(self, project, lead, settings):
        settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "MAX_UPLOAD_BYTES": 100}
        with pytest.raises(ApplicationError, match="limited to 100 bytes"):
            import_job_create(project=project, user=lead, upload=upload(synthetic_zip(["1"])))
        assert stored_imports() == []


@pytest.mark.django_db
class TestImportJobRun:
    def _job(self, project, lead, data: bytes) -> ImportJob:
        source = default_storage.save("imports/test.zip", ContentFile(data))
        return ImportJob.objects.create(project=project, created_by=lead, source=source, source_kind="zip")

    def test_rerun_after_an_interrupted_job_finishes_it_without_duplicates(self, project, lead):
        # given a job whose worker died after importing the first two of five screens
        data = synthetic_zip(["1", "2", "3", "4", "5"])
        partial = synthetic_zip(["1", "2"])
        import_screens(project=project, source=io.BytesIO(partial))
        job = self._job(project, lead, data)
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.RUNNING, processed=2, total=5, heartbeat_at=timezone.now() - timedelta(hours=1)
        )
        # when the task is delivered again
        job_run(kind="import", job_id=job.pk)
        # then the job is done: three imported now, two already present, no duplicate screen or candidate
        job.refresh_from_db()
        assert job.status == ImportJob.Status.DONE
        assert (job.summary["imported"], job.summary["already_present"]) == (3, 2)
        assert Screen.objects.filter(project=project).count() == 5
        assert Candidate.objects.filter(screen__project=project).count() == 5
        # and a duplicate delivery of a finished job changes nothing
        finished_at = job.finished_at
        job_run(kind="import", job_id=job.pk)
        job.refresh_from_db()
        assert job.finished_at == finished_at and job.summary["imported"] == 3

    def test_a_failure_is_recorded_and_raised(self, project, lead):
        # given a job whose uploaded file has vanished from storage
        job = self._job(project, lead, synthetic_zip(["1"]))
        default_storage.delete(job.source)
        # when it runs, the error propagates (the worker sees it) and the job records it
        with pytest.raises(ApplicationError):
            job_run(kind="import", job_id=job.pk)
        job.refresh_from_db()
        assert job.status == ImportJob.Status.FAILED
        assert job.error
        assert job.finished_at is not None

    def test_a_failed_job_runs_again_only_when_re_run(self, project, lead, django_capture_on_commit_callbacks):
        job = self._job(project, lead, synthetic_zip(["1"]))
        ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.FAILED, error="boom")
        # a stray delivery leaves the failure as it is
        job_run(kind="import", job_id=job.pk)
        job.refresh_from_db()
        assert (job.status, job.error) == (ImportJob.Status.FAILED, "boom")
        # a lead's re-run queues it, and it finishes
        with django_capture_on_commit_callbacks(execute=True):
            job_rerun(model=ImportJob, user=lead, job_id=job.pk)
        job.refresh_from_db()
        assert (job.status, job.error, job.summary["imported"], job.attempts) == (ImportJob.Status.DONE, "", 1, 1)

    @pytest.mark.realdata
    def test_real_rico_screens(self, project, lead, shared_data):
        folder = shared_data / "rico" / "screens"
        ids = [i for i in REAL_IDS if (folder / f"{i}.json").exists()]
        job = self._job(project, lead, real_zip(folder, ids))
        job_run(kind="import", job_id=job.pk)
        job.refresh_from_db()
        assert job.status == ImportJob.Status.DONE, job.error
        assert job.summary["imported"] + len(job.summary["rejected"]) == len(ids)
        assert job.summary["imported"] >= 1
        assert Screen.objects.filter(project=project).count() == job.summary["imported"]


@pytest.mark.django_db
class TestImportApi:
    url = "/api/projects/demo/imports/"

    def test_lead_uploads_a_zip_and_gets_202_with_the_job(self, api_client, lead, django_capture_on_commit_callbacks):
        login(api_client, lead)
        with django_capture_on_commit_callbacks(execute=False):
            response = api_client.post(
                self.url, {"file": upload(synthetic_zip(["1"])), "device_size": "1440x2560"}, format="multipart"
            )
        assert response.status_code == 202, response.content
        body = response.json()
        assert body["status"] == "queued"
        assert body["project"] == "demo"
        assert body["created_by"] == "leo"
        assert body["url"] == f"/api/imports/{body['id']}/"
        assert (body["device_width"], body["device_height"]) == (1440, 2560)

    def test_lead_names_a_prefix_as_json_and_follows_the_job(
        self, api_client, lead, django_capture_on_commit_callbacks
    ):
        default_storage.save("staging/demo/a/5.png", ContentFile(png_bytes(144, 256)))
        default_storage.save("staging/demo/a/5.json", ContentFile(json.dumps(synthetic_vh("x"))))
        login(api_client, lead)
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(self.url, {"prefix": "a"}, format="json")
        assert response.status_code == 202
        detail = api_client.get(response.json()["url"])
        assert detail.status_code == 200
        body = detail.json()
        assert body["status"] == "done"
        assert body["summary"]["imported"] == 1
        assert (body["processed"], body["total"]) == (1, 1)

    def test_bad_input_gets_a_400_naming_the_field(self, api_client, lead):
        login(api_client, lead)
        response = api_client.post(self.url, {"prefix": "x", "device_size": "wide"}, format="json")
        assert response.status_code == 400
        assert response.json()["field"] == "device_size"
        response = api_client.post(self.url, {"file": upload(b"hello", "a.zip")}, format="multipart")
        assert response.status_code == 400
        assert response.json() == {
            "detail": "The file is not a zip archive.",
            "field": "file",
            "file": ["The file is not a zip archive."],
        }
        assert ImportJob.objects.count() == 0

    def test_site_admin_may_import(self, api_client, project, django_capture_on_commit_callbacks):
        login(api_client, UserFactory(username="root", is_superuser=True))
        with django_capture_on_commit_callbacks(execute=False):
            response = api_client.post(self.url, {"file": upload(synthetic_zip(["1"]))}, format="multipart")
        assert response.status_code == 202

    def test_annotator_403_outsider_404_anonymous_403(self, api_client, annotator, outsider):
        other_lead = UserFactory(username="olga")
        MembershipFactory(project=ProjectFactory(slug="other"), user=other_lead, role="lead")
        expected = [(None, 403), (annotator, 403), (outsider, 404), (other_lead, 404)]
        for user, status in expected:
            api_client.logout()
            if user:
                login(api_client, user)
            response = api_client.post(self.url, {"file": upload(synthetic_zip(["1"]))}, format="multipart")
            assert response.status_code == status, user
        assert ImportJob.objects.count() == 0
        assert stored_imports() == []

    def test_job_detail_is_for_leads_only(self, api_client, project, lead, annotator, outsider):
        job = ImportJob.objects.create(project=project, created_by=lead, source="imports/x.zip", source_kind="zip")
        url = f"/api/imports/{job.pk}/"
        assert api_client.get(url).status_code == 403
        for user, status in [(annotator, 403), (outsider, 404), (lead, 200)]:
            login(api_client, user)
            assert api_client.get(url).status_code == status
        assert api_client.get("/api/imports/999999/").status_code == 404

    def test_each_body_is_read_by_its_own_serializer(self, api_client, lead):
        # a key the body's media type does not define is refused by name, before anything is stored
        login(api_client, lead)
        response = api_client.post(self.url, {"file": upload(synthetic_zip(["1"])), "prefix": "a"}, format="multipart")
        assert (response.status_code, response.json()["field"]) == (400, "prefix")
        response = api_client.post(self.url, {"prefix": "a", "file": "x.zip"}, format="json")
        assert (response.status_code, response.json()["field"]) == (400, "file")
        response = api_client.post(self.url, {"device_size": "1440x2560"}, format="json")
        assert (response.status_code, response.json()["field"]) == (400, "prefix")
        # a form that is neither (urlencoded) is not a body this endpoint reads
        response = api_client.post(self.url, "prefix=a", content_type="application/x-www-form-urlencoded")
        assert response.status_code == 415
        assert ImportJob.objects.count() == 0 and stored_imports() == []

    def test_schema_documents_the_import_endpoints(self, api_client):
        schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
        create = schema["paths"]["/api/projects/{slug}/imports/"]["post"]
        # one component per body, so a generated client sends the one it is given (not both)
        assert {
            media: body["schema"]["$ref"].rsplit("/", 1)[1] for media, body in create["requestBody"]["content"].items()
        } == {
            "multipart/form-data": "ImportUploadRequest",
            "application/json": "ImportPrefixRequest",
        }
        components = schema["components"]["schemas"]
        assert components["ImportUploadRequest"]["required"] == ["file"]
        assert components["ImportUploadRequest"]["properties"]["file"]["format"] == "binary"
        assert components["ImportPrefixRequest"]["required"] == ["prefix"]
        assert create["responses"]["202"]["content"]["application/json"]["schema"]["$ref"].endswith("/JobOutput")
        detail = schema["paths"]["/api/imports/{job_id}/"]["get"]
        assert set(detail["responses"]) >= {"200", "403", "404"}


@pytest.mark.django_db(transaction=True)
def test_import_task_on_a_real_celery_worker(celery_worker, project, lead, api_client):
    """The API queues the task on the Redis broker; a real worker runs it and the job reports done."""
    login(api_client, lead)
    response = api_client.post(
        "/api/projects/demo/imports/", {"file": upload(synthetic_zip(["11", "12", "13"]))}, format="multipart"
    )
    assert response.status_code == 202
    job_id = response.json()["id"]
    deadline = time.monotonic() + 60
    job = ImportJob.objects.get(pk=job_id)
    while job.status in (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    assert job.summary["imported"] == 3
    assert Screen.objects.filter(project=project).count() == 3


@pytest.mark.django_db
def test_an_oversized_upload_is_refused_before_its_body_is_read(api_client, lead, settings):
    # given a token client announcing a body far over the cap
    from rest_framework.authtoken.models import Token

    settings.SCREENQA_IMPORT = {**settings.SCREENQA_IMPORT, "MAX_UPLOAD_BYTES": 1000}
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=lead).key}")
    # when it posts (the test client sends the real body; the declared length is what is checked)
    response = api_client.post(
        "/api/projects/demo/imports/",
        {"file": upload(synthetic_zip(["1"]))},
        format="multipart",
        CONTENT_LENGTH=str(50 * 1024 * 1024),
    )
    # then it is a 400 on the file field, and nothing is stored
    assert response.status_code == 400
    assert response.json()["field"] == "file"
    assert response.json()["detail"] == "The file is 52,428,800 bytes; uploads are limited to 1,000 bytes."
    assert stored_imports() == []


@pytest.mark.django_db
class TestImportJobRetry:
    def _job(self, project, lead, **fields) -> ImportJob:
        source = default_storage.save("imports/retry.zip", ContentFile(synthetic_zip(["1", "2"])))
        return ImportJob.objects.create(project=project, created_by=lead, source=source, source_kind="zip", **fields)

    def test_a_failed_job_is_queued_again_and_finishes(
        self, api_client, project, lead, django_capture_on_commit_callbacks
    ):
        job = self._job(project, lead, status="failed", error="OSError: disk full")
        login(api_client, lead)
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(f"/api/imports/{job.pk}/retry/")
        assert response.status_code == 202
        job.refresh_from_db()
        assert (job.status, job.error, job.summary["imported"]) == ("done", "", 2)

    def test_a_stalled_running_job_may_be_run_again(
        self, api_client, project, lead, django_capture_on_commit_callbacks
    ):
        job = self._job(project, lead, status="running")
        stale = timezone.now() - timedelta(seconds=settings.SCREENQA_JOB_STALE_SECONDS + 1)
        ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=stale)
        login(api_client, lead)
        with django_capture_on_commit_callbacks(execute=True):
            assert api_client.post(f"/api/imports/{job.pk}/retry/").status_code == 202
        job.refresh_from_db()
        assert (job.status, job.attempts) == ("done", 1)

    @pytest.mark.parametrize("status", ["done", "running", "queued"])
    def test_done_or_live_jobs_are_a_conflict_and_nothing_is_queued(
        self, api_client, project, lead, status, django_capture_on_commit_callbacks
    ):
        job = self._job(project, lead, status=status)
        login(api_client, lead)
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = api_client.post(f"/api/imports/{job.pk}/retry/")
        assert response.status_code == 409
        assert "detail" in response.json()
        assert callbacks == []
        job.refresh_from_db()
        assert job.status == status

    def test_annotator_403_outsider_404(self, api_client, project, lead, annotator, outsider):
        job = self._job(project, lead, status="failed")
        assert api_client.post(f"/api/imports/{job.pk}/retry/").status_code == 403
        for user, code in [(annotator, 403), (outsider, 404)]:
            login(api_client, user)
            assert api_client.post(f"/api/imports/{job.pk}/retry/").status_code == code
        job.refresh_from_db()
        assert job.status == "failed"

"""The export job on a real Celery worker over the Redis broker."""

from __future__ import annotations

import time
import zipfile

import pytest

from annotation.models import ReleaseJob
from tests.conftest import login
from tests.factories import ScreenFactory, kept_question


@pytest.mark.django_db(transaction=True)
def test_export_runs_on_a_real_worker_and_stores_the_zip(celery_worker, project, lead, api_client):
    # Given a project with kept questions in two splits
    for rico_id, split in (("31", "validation"), ("7", "train")):
        screen = ScreenFactory(project=project, rico_id=rico_id, split=split)
        kept_question(
            screen=screen, text=f"Q{rico_id}?", position=0, answers=[("A.", [{"text": "a"}])], short_answers=["a"]
        )
    # When a lead starts an export through the API
    login(api_client, lead)
    response = api_client.post(f"/api/projects/{project.slug}/exports/", {"format": "screenqa"}, format="json")
    assert response.status_code == 202
    job = ReleaseJob.objects.get(pk=response.json()["id"])
    deadline = time.monotonic() + 60
    while job.status in (ReleaseJob.Status.QUEUED, ReleaseJob.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.2)
        job.refresh_from_db()
    # Then the worker finished the job and the zip is in storage
    assert job.status == ReleaseJob.Status.DONE, job.error
    assert job.result["counts"]["total"]["questions"] == 2
    with job.artifact.open("rb") as fh, zipfile.ZipFile(fh) as archive:
        assert "answers_and_bboxes/train.json" in archive.namelist()
        assert archive.read("short_answers/validation.json") == (
            b'[{"image_id": 31, "question": "Q31?", "ground_truth": ["a"]}]'
        )
